/**
 * `AgentPool`: many agents on one machine, within limits.
 *
 * Every CLI process costs hundreds of MB. The pool runs at most `maxConcurrent` of them; more
 * requests wait in a bounded FIFO queue (ordered by priority first, see `withPriority`) and fail
 * with `PoolFullError` or `PoolTimeoutError` when it overflows or a wait runs out. It can keep
 * `warm` spares started and initialized, so a request that matches claims one and its first
 * answer skips the CLI's start-up. It has the same API as `ClaudeAgent`, and `AgentPool.layer`
 * provides `ClaudeAgent` too: code moves onto the pool by changing a Layer.
 *
 * Sessions can also be kept by a key of the caller's (a user, a chat): `chat` and `withSession`
 * reuse the key's session while it is idle, for `idleTimeToLive`, and resume its conversation
 * (`resume` on its session id) when its process was evicted for another request or has died.
 *
 * @since 0.1.0
 */
import type { FileSystem, Path } from "@effect/platform"
import {
  Clock,
  Context,
  Deferred,
  Duration,
  Effect,
  Exit,
  FiberId,
  FiberRef,
  Layer,
  Mailbox,
  Metric,
  Option,
  PubSub,
  Scope,
  Stream
} from "effect"
import { identity } from "effect/Function"
import type * as AgentSession from "./AgentSession.js"
import * as ClaudeAgent from "./ClaudeAgent.js"
import * as Query from "./internal/query.js"
import * as Turns from "./internal/turns.js"
import * as Telemetry from "./Telemetry.js"
import type * as Message from "./schema/Message.js"
import type * as Options from "./schema/Options.js"
import { CLIConnectionError, PoolFullError, PoolTimeoutError, type SdkError } from "./SdkError.js"

/**
 * How the pool behaves. Every field is optional.
 *
 * @example
 * ```ts
 * import { AgentPool } from "effect-claude-agent"
 *
 * const config: AgentPool.PoolConfig = { maxConcurrent: 4, maxPending: 100, pendingTimeout: "2 minutes", warm: 1 }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface PoolConfig {
  /** At most this many CLI processes at once, spares included. Default `min(4, cores)`. */
  readonly maxConcurrent?: number | undefined
  /** At most this many requests waiting for a process; one more fails with `PoolFullError`. Default 1000. */
  readonly maxPending?: number | undefined
  /** How long a request may wait for a process before it fails with `PoolTimeoutError`. Default: no limit. */
  readonly pendingTimeout?: Duration.DurationInput | undefined
  /** How many started-and-initialized spares to keep ready. Default 0. */
  readonly warm?: number | undefined
  /**
   * The options spares are started with. A request claims a spare only when its options are the
   * same (callbacks compared by identity), or when it gives none. Default `{}`.
   */
  readonly warmOptions?: Options.Options | undefined
  /**
   * How long a keyed session (`chat`, `withSession`) stays open while nobody uses it; then its
   * process is stopped (its conversation is resumed at the next use). Idle sessions count towards
   * `maxConcurrent`, and the least recently used one is stopped sooner when a request needs its
   * slot. Zero stops the process after every use. Default 5 minutes.
   */
  readonly idleTimeToLive?: Duration.DurationInput | undefined
}

/**
 * Why the pool stopped a process it was keeping: a spare, or a keyed session.
 *
 * - `slot-needed`: a request needed its slot (for keyed sessions: the least recently used idle one);
 * - `spare-died`, `session-died`: its CLI exited on its own (a keyed session is resumed at its next use);
 * - `idle-expired`: a keyed session was idle for `idleTimeToLive`;
 * - `unfinished`: a use of a keyed session ended before its turn did (interrupted, failed, or
 *   stopped reading before the `result`), so the session cannot be handed to the next use as it is;
 * - `options-changed`: a use of the key gave other options; the session is resumed with them;
 * - `resume-failed`: the CLI found no conversation to resume (its transcript is gone: another
 *   machine, a cleaned `HOME`, a process killed before it wrote any): that turn ends with the
 *   CLI's error `result`, and the key's next use starts a new conversation;
 * - `forgotten`: `forget(key)`;
 * - `pool-closed`: the pool's scope closed.
 *
 * @example
 * ```ts
 * import { AgentPool } from "effect-claude-agent"
 *
 * const resumedLater = (reason: AgentPool.EvictionReason) => reason !== "forgotten" && reason !== "spare-died"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type EvictionReason =
  | "slot-needed"
  | "spare-died"
  | "session-died"
  | "idle-expired"
  | "unfinished"
  | "options-changed"
  | "resume-failed"
  | "forgotten"
  | "pool-closed"

/**
 * Something that happened in the pool, for dashboards and tests (`pool.events`).
 *
 * @example
 * ```ts
 * import { AgentPool } from "effect-claude-agent"
 *
 * const describe = (event: AgentPool.PoolEvent) => event._tag === "Queued" ? `${event.pending} waiting` : event._tag
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type PoolEvent =
  /** A request found every process busy and waits (`pending` counts it). */
  | { readonly _tag: "Queued"; readonly pending: number }
  /** A request got a slot and starts a new CLI process (`key`: for that keyed session). */
  | { readonly _tag: "Started"; readonly key?: string | undefined }
  /** A request claimed a warm spare (`key`: as that keyed session). */
  | { readonly _tag: "ClaimedWarm"; readonly key?: string | undefined }
  /** A spare is started and initialized. */
  | { readonly _tag: "WarmReady" }
  /** A use of a key took its idle session: no new process. */
  | { readonly _tag: "Reused"; readonly key: string }
  /** A keyed session's new process resumes its conversation (after `Evicted` or a crash). */
  | { readonly _tag: "Resumed"; readonly key: string; readonly sessionId: string }
  /** A spare or a keyed session (`key`) was stopped and its slot freed. */
  | { readonly _tag: "Evicted"; readonly reason: EvictionReason; readonly key?: string | undefined }
  /** A session's CLI ended with an error (`key`: a keyed session's). */
  | { readonly _tag: "Crashed"; readonly error: SdkError; readonly key?: string | undefined }
  /** A session ended and its slot is free. */
  | { readonly _tag: "Released" }

/**
 * The pool's state now.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { AgentPool } from "effect-claude-agent"
 *
 * const busy = Effect.map(AgentPool.AgentPool, (pool) => pool.stats).pipe(Effect.flatten, Effect.map((s) => s.active))
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface PoolStats {
  /** Sessions in use. */
  readonly active: number
  /** Keyed sessions open but not in use (`idleTimeToLive`). */
  readonly idle: number
  /** Spares ready to be claimed. */
  readonly warm: number
  /** Spares starting. */
  readonly starting: number
  /** Requests waiting for a process. */
  readonly pending: number
  readonly maxConcurrent: number
}

/**
 * The pool's operations: `ClaudeAgent`'s, plus what it knows.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { AgentPool } from "effect-claude-agent"
 *
 * const busy = Effect.flatMap(AgentPool.AgentPool, (pool) => Effect.map(pool.stats, (s) => s.active + s.pending))
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface AgentPoolShape extends ClaudeAgent.ClaudeAgentShape {
  readonly stats: Effect.Effect<PoolStats>
  /** Every event from the moment the stream is run. */
  readonly events: Stream.Stream<PoolEvent>
  /**
   * Runs `use` with the session kept under `key`, which nobody else uses meanwhile (a second use
   * of the key waits for the first to end). The session stays open after `use`, idle, for the
   * next use of the key; one that was stopped (evicted, expired, crashed) is opened again with
   * `resume` on its session id, so the model sees the earlier turns. `options` apply when the
   * session is opened; a use with other options (compared as data, callbacks by identity: build
   * them once) reopens it with them, resumed. The session must not be used after `use` ends, and
   * `use` should read each turn to its `result`: a use that ends mid-turn stops the process.
   * The callbacks in `options` (tools, hooks, `canUseTool`) run with the services of the use that
   * started the key's current process.
   */
  readonly withSession: <A, E, R, RO = never>(
    key: string,
    options: Options.Options<RO> | undefined,
    use: (session: AgentSession.AgentSession) => Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | SdkError, R | RO>
  /**
   * One turn of the conversation kept under `key` (see `withSession`): sends `prompt` and streams
   * the messages up to its `result`. The key is held until the stream ends.
   */
  readonly chat: <R = never>(
    key: string,
    prompt: AgentSession.Prompt,
    options?: Options.Options<R>
  ) => Stream.Stream<Message.Message, SdkError, R>
  /**
   * Ends the conversation kept under `key`: waits for its current use, stops its process and
   * forgets its session id, so the key's next use starts a new conversation. The pool remembers
   * a session id per key until then.
   */
  readonly forget: (key: string) => Effect.Effect<void>
}

/**
 * The `AgentPool` service.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { AgentPool } from "effect-claude-agent"
 *
 * const answers = Effect.gen(function* () {
 *   const pool = yield* AgentPool.AgentPool
 *   return yield* Effect.forEach(["a", "b", "c"], (q) => pool.query(q).pipe(Stream.runCollect), { concurrency: "unbounded" })
 * })
 * ```
 *
 * @since 0.1.0
 * @category tags
 */
export class AgentPool extends Context.Tag("effect-claude-agent/AgentPool")<AgentPool, AgentPoolShape>() {}

/**
 * One turn of the conversation kept under `key` by the pool in context: sends `prompt` and
 * streams the messages up to its `result`. The key's session stays open while idle (for
 * `idleTimeToLive`) and is reused by the key's next turn; if its process was stopped meanwhile
 * (evicted for another request, expired, crashed) the next turn resumes the conversation on a
 * new one, so the model sees the earlier turns. Turns of one key take turns; different keys run
 * in parallel within `maxConcurrent`.
 *
 * @example
 * ```ts
 * import { Stream } from "effect"
 * import { AgentPool, Message } from "effect-claude-agent"
 *
 * // A chat per user: each user's turns continue that user's conversation.
 * const reply = (userId: string, text: string) =>
 *   AgentPool.chat(userId, text, { maxTurns: 5 }).pipe(
 *     Stream.filter(Message.isAssistant),
 *     Stream.map(Message.assistantText),
 *     Stream.runCollect
 *   )
 * ```
 *
 * @since 0.1.0
 * @category accessors
 */
export const chat = <R = never>(
  key: string,
  prompt: AgentSession.Prompt,
  options?: Options.Options<R>
): Stream.Stream<Message.Message, SdkError, AgentPool | R> =>
  Stream.unwrap(Effect.map(AgentPool, (pool) => pool.chat(key, prompt, options)))

/**
 * Runs `use` with the session kept under `key` by the pool in context, for several turns or
 * control requests at once (see `chat`). Nobody else uses the key's session meanwhile; it stays
 * open after `use`, for the key's next use. `use` should read each turn it starts to its
 * `result`, and must not keep the session: a use that ends mid-turn stops the process (the next
 * use resumes the conversation), and the session refuses to `send` after its use.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { AgentPool, ClaudeAgent } from "effect-claude-agent"
 *
 * const twoTurns = AgentPool.withSession("user-42", { model: "claude-sonnet-4-5" }, (session) =>
 *   Effect.gen(function*() {
 *     yield* session.send("Summarise our conversation so far")
 *     yield* session.receiveResponse.pipe(ClaudeAgent.lastResult)
 *     yield* session.send("Now in one sentence")
 *     return yield* session.receiveResponse.pipe(ClaudeAgent.lastResult)
 *   }))
 * ```
 *
 * @since 0.1.0
 * @category accessors
 */
export const withSession = <A, E, R, RO = never>(
  key: string,
  options: Options.Options<RO> | undefined,
  use: (session: AgentSession.AgentSession) => Effect.Effect<A, E, R>
): Effect.Effect<A, E | SdkError, AgentPool | R | RO> =>
  Effect.flatMap(AgentPool, (pool) => pool.withSession(key, options, use))

const priorityRef = FiberRef.unsafeMake(0)

/**
 * Runs `effect` with a queue priority for the pool requests it makes: a waiting request with a
 * higher priority gets the next free process first; equal priorities are served in arrival order.
 * Default 0.
 *
 * @example
 * ```ts
 * import { Stream } from "effect"
 * import { AgentPool, ClaudeAgent } from "effect-claude-agent"
 *
 * const urgent = ClaudeAgent.query("page the on-call").pipe(Stream.runDrain, AgentPool.withPriority(10))
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const withPriority = (priority: number) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.locally(effect, priorityRef, priority)

type Restore = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

interface Waiter {
  readonly priority: number
  readonly granted: Deferred.Deferred<void, CLIConnectionError>
}

interface Spare {
  readonly session: AgentSession.AgentSession
  readonly scope: Scope.CloseableScope
}

// What the pool keeps per key: the conversation's session id (to resume it) and, while its
// process runs, that process. The lock makes uses of one key take turns.
interface Keyed {
  readonly key: string
  readonly lock: Effect.Semaphore
  /** Uses holding or waiting for the lock, and `forget`s: while non-zero the entry stays mapped. */
  holders: number
  sessionId: string | undefined
  live: Live | undefined
  /** Completed when the last stopped process of this key has exited: a resume waits for it. */
  stopping: Deferred.Deferred<void> | undefined
}

interface Live {
  readonly session: AgentSession.AgentSession
  readonly scope: Scope.CloseableScope
  readonly options: Options.Options<unknown> | undefined
  inUse: boolean
  dead: boolean
  /** Completing it cancels the idle timer. */
  idleTimer: Deferred.Deferred<void> | undefined
  /** Completed once the pool has stopped the process. */
  readonly stopped: Deferred.Deferred<void>
  /** The CLI found no conversation to resume (it answered a prompt with "No conversation found"). */
  resumeFailed: boolean
}

// The CLI's answer to a prompt for a `resume` whose conversation it cannot find: an error result,
// "No conversation found with session ID: <id>".
const isNoConversation = (message: Message.Message): boolean =>
  message.type === "result" && message.is_error && "errors" in message &&
  (message.errors ?? []).some((error) => error.startsWith("No conversation found"))

const defaultMaxConcurrent = (): number => {
  const os: unknown = Reflect.get(globalThis, "navigator")
  const cores = typeof os === "object" && os !== null && "hardwareConcurrency" in os &&
      typeof os.hardwareConcurrency === "number"
    ? os.hardwareConcurrency
    : 4
  return Math.max(1, Math.min(4, cores))
}

// Options are the same when their data is, and their callbacks are the same functions.
const sameOptions = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  const keysA = Object.keys(a).filter((k) => Reflect.get(a, k) !== undefined)
  const keysB = Object.keys(b).filter((k) => Reflect.get(b, k) !== undefined)
  if (keysA.length !== keysB.length) return false
  return keysA.every((k) => sameOptions(Reflect.get(a, k), Reflect.get(b, k)))
}

// No options and empty options are the same.
const sameKeyedOptions = (a: object | undefined, b: object | undefined): boolean => sameOptions(a ?? {}, b ?? {})

// The options that reopen a keyed conversation: its own session id resumed, without what
// started (or forked) it the first time.
const resumeOptions = <R>(options: Options.Options<R> | undefined, sessionId: string): Options.Options<R> => ({
  ...options,
  resume: sessionId,
  sessionId: undefined,
  continue: undefined,
  forkSession: undefined,
  resumeSessionAt: undefined
})

/**
 * Builds a pool over `agent` (which opens the sessions) in the current scope. Closing the scope
 * stops the spares and the keyed sessions and fails the requests still waiting; other sessions in
 * use end with their own scopes.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { AgentPool, ClaudeAgent } from "effect-claude-agent"
 *
 * const pool = Effect.flatMap(ClaudeAgent.ClaudeAgent, (agent) => AgentPool.make(agent, { maxConcurrent: 2 }))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  agent: ClaudeAgent.ClaudeAgentShape,
  config: PoolConfig = {}
): Effect.Effect<AgentPoolShape, never, Scope.Scope> =>
  Effect.gen(function*() {
    const maxConcurrent = Math.max(1, Math.floor(config.maxConcurrent ?? defaultMaxConcurrent()))
    const maxPending = Math.max(0, Math.floor(config.maxPending ?? 1000))
    const pendingTimeout = config.pendingTimeout === undefined ? undefined : Duration.decode(config.pendingTimeout)
    const warmTarget = Math.max(0, Math.floor(config.warm ?? 0))
    const warmOptions: Options.Options = config.warmOptions ?? {}
    const idleTimeToLive = Duration.decode(config.idleTimeToLive ?? "5 minutes")
    const poolScope = yield* Effect.scope
    // What a keyed session's long-lived fibers (its reader, the callbacks it runs) log and trace
    // with: the pool's, not those of whichever use happened to open it.
    const poolSpan = yield* Effect.currentParentSpan.pipe(Effect.option)
    const poolLoggers = yield* FiberRef.get(FiberRef.currentLoggers)
    const poolAnnotations = yield* FiberRef.get(FiberRef.currentLogAnnotations)
    const poolLogSpans = yield* FiberRef.get(FiberRef.currentLogSpan)
    // The opening gets a span of its own, under the pool's span or a root, linked to the use that
    // asked for it: the session's span (its whole life) sits under it.
    const inPoolContext = (key: string) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
      Effect.flatMap(Effect.currentParentSpan.pipe(Effect.option), (caller) =>
        effect.pipe(
          Effect.withSpan("AgentPool.open", {
            kind: "internal",
            attributes: { key },
            ...(Option.isSome(poolSpan) ? { parent: poolSpan.value } : { root: true }),
            ...(Option.isSome(caller) ? { links: [{ _tag: "SpanLink", span: caller.value, attributes: {} }] } : {})
          }),
          Effect.locally(FiberRef.currentLoggers, poolLoggers),
          Effect.locally(FiberRef.currentLogAnnotations, poolAnnotations),
          Effect.locally(FiberRef.currentLogSpan, poolLogSpans)
        ))
    const hub = yield* PubSub.unbounded<PoolEvent>()
    const publish = (event: PoolEvent) => PubSub.publish(hub, event)

    // Slots: one per CLI process, spares and idle keyed sessions included. All bookkeeping is
    // synchronous, so it cannot interleave; effects (closing processes, completing waiters)
    // follow it. Invariant: while a request waits, no spare and no idle keyed session holds a
    // slot (each is stopped for it instead).
    let slotsUsed = 0
    let active = 0
    let starting = 0
    let closed = false
    const waiters: Array<Waiter> = []
    const spares: Array<Spare> = []
    const keyed = new Map<string, Keyed>()
    // The keyed sessions open and not in use, least recently used first (a Set keeps insertion order).
    const idle = new Set<Keyed>()

    const grantNext = (): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (slotsUsed >= maxConcurrent) return Effect.void
        const next = waiters.shift()
        if (next !== undefined) {
          slotsUsed++
          return Effect.zipRight(Deferred.succeed(next.granted, undefined), grantNext())
        }
        return refill
      })

    const releaseSlot = Effect.suspend(() => {
      slotsUsed--
      return grantNext()
    })

    const closeSpare = (spare: Spare, reason: EvictionReason) =>
      Scope.close(spare.scope, Exit.void).pipe(
        Effect.zipRight(publish({ _tag: "Evicted", reason })),
        Effect.zipRight(releaseSlot)
      )

    // Stops a keyed session's process and frees its slot; the key keeps its session id, so its
    // next use resumes the conversation. Does nothing if that process is already being stopped.
    const retire = (entry: Keyed, live: Live, reason: EvictionReason): Effect.Effect<void> =>
      Effect.uninterruptible(Effect.suspend(() => {
        if (entry.live !== live) return Effect.void
        entry.live = undefined
        idle.delete(entry)
        const stopping = Deferred.unsafeMake<void>(FiberId.none)
        entry.stopping = stopping
        return Effect.gen(function*() {
          if (live.idleTimer !== undefined) yield* Deferred.succeed(live.idleTimer, undefined)
          const id = yield* live.session.control.lastSessionId
          if (id !== undefined && reason !== "forgotten" && reason !== "resume-failed") entry.sessionId = id
          yield* Scope.close(live.scope, Exit.void)
          yield* Deferred.succeed(live.stopped, undefined)
          yield* Deferred.succeed(stopping, undefined)
          yield* publish({ _tag: "Evicted", reason, key: entry.key })
          yield* releaseSlot
        })
      }))

    // The least recently used idle keyed session.
    const oldestIdle = (): Option.Option<readonly [Keyed, Live]> => {
      for (const entry of idle) {
        if (entry.live !== undefined) return Option.some([entry, entry.live] as const)
      }
      return Option.none()
    }

    // Keeps `warm` spares while slots are free and nobody waits for one.
    const refill: Effect.Effect<void> = Effect.suspend(() => {
      if (closed || warmTarget === 0) return Effect.void
      const missing = warmTarget - spares.length - starting
      let started = 0
      while (started < missing && slotsUsed < maxConcurrent && waiters.length === 0) {
        slotsUsed++
        starting++
        started++
      }
      if (started === 0) return Effect.void
      return spareStarts.offerAll(Array.from({ length: started }, () => undefined))
    })

    const startSpare = Effect.gen(function*() {
      const scope = yield* Scope.make()
      yield* agent.session(warmOptions).pipe(
        Effect.tap((session) => session.initializationResult),
        Scope.extend(scope),
        Effect.matchEffect({
          onFailure: (error) =>
            Effect.logWarning(`effect-claude-agent: a warm spare failed to start: ${error.message}`).pipe(
              Effect.zipRight(Scope.close(scope, Exit.void)),
              Effect.zipRight(Effect.sync(() => void starting--)),
              // Not refilled at once: a spare that cannot start would otherwise be retried in a loop.
              Effect.zipRight(Effect.suspend(() => {
                slotsUsed--
                return waiters.length > 0 ? grantNext() : Effect.void
              }))
            ),
          onSuccess: (session) =>
            Effect.gen(function*() {
              starting--
              if (closed) {
                yield* Scope.close(scope, Exit.void)
                slotsUsed--
                return
              }
              const spare: Spare = { session, scope }
              // A request started waiting while this spare started: it needs the slot more.
              if (waiters.length > 0) return yield* closeSpare(spare, "slot-needed")
              spares.push(spare)
              yield* publish({ _tag: "WarmReady" })
              // A spare whose CLI dies while it waits is dropped and its slot freed.
              yield* session.control.closed.pipe(
                Effect.exit,
                Effect.flatMap(() => {
                  const index = spares.indexOf(spare)
                  if (index === -1) return Effect.void
                  spares.splice(index, 1)
                  return closeSpare(spare, "spare-died")
                }),
                Effect.forkIn(scope)
              )
            })
        })
      )
    })

    // Spares are started by one fiber of the pool's own, never by a request's fiber: a spare must
    // not inherit the context (scope, logger, interruption) of whichever request triggered it.
    const spareStarts = yield* Mailbox.make<void>()
    yield* spareStarts.take.pipe(
      Effect.flatMap(() => Effect.forkIn(startSpare, poolScope)),
      Effect.forever,
      Effect.forkIn(poolScope)
    )

    // Waits for a slot: at once if one is free, else by stopping a spare or the least recently
    // used idle keyed session, else in the queue. Called in an uninterruptible region, which the
    // caller leaves only once the slot's release is registered; only the wait is interruptible
    // (`restore`: a deadline, the caller giving up).
    const acquireSlot = (
      restore: Restore
    ): Effect.Effect<void, PoolFullError | PoolTimeoutError | CLIConnectionError> =>
      Effect.gen(function*() {
        if (closed) return yield* Effect.fail(new CLIConnectionError({ reason: "The agent pool is closed" }))
        if (slotsUsed < maxConcurrent && waiters.length === 0) {
          slotsUsed++
          return
        }
        if (waiters.length === 0) {
          // The stopped process's slot passes straight to this request.
          const spare = spares.shift()
          if (spare !== undefined) {
            slotsUsed++
            return yield* closeSpare(spare, "slot-needed")
          }
          const lru = oldestIdle()
          if (Option.isSome(lru)) {
            slotsUsed++
            return yield* retire(lru.value[0], lru.value[1], "slot-needed")
          }
        }
        if (waiters.length >= maxPending) {
          return yield* Effect.fail(new PoolFullError({ pending: waiters.length, maxConcurrent }))
        }
        const priority = yield* FiberRef.get(priorityRef)
        const waiter: Waiter = { priority, granted: yield* Deferred.make<void, CLIConnectionError>() }
        const at = waiters.findIndex((w) => w.priority < priority)
        if (at === -1) waiters.push(waiter)
        else waiters.splice(at, 0, waiter)
        yield* publish({ _tag: "Queued", pending: waiters.length })
        yield* Metric.set(Telemetry.poolPending, waiters.length)
        const queuedAt = yield* Clock.currentTimeMillis
        // The wait's length and the queue's depth go to the pool metrics, whatever ends the wait.
        const measured = Effect.flatMap(Clock.currentTimeMillis, (now) =>
          Effect.zipRight(
            Metric.update(Telemetry.poolWait, now - queuedAt),
            Effect.suspend(() => Metric.set(Telemetry.poolPending, waiters.length))
          ))
        yield* restore(withPendingTimeout(Deferred.await(waiter.granted))).pipe(Effect.onExit((exit) =>
          (Exit.isSuccess(exit) ? Effect.void : Effect.suspend(() => {
            const index = waiters.indexOf(waiter)
            if (index !== -1) {
              waiters.splice(index, 1)
              return Effect.void
            }
            // Granted while it was giving up: pass the slot on.
            return Deferred.isDone(waiter.granted).pipe(
              Effect.flatMap((granted) => (granted ? releaseSlot : Effect.void))
            )
          })).pipe(Effect.zipRight(measured))
        ))
      })

    const withPendingTimeout = <A, E>(wait: Effect.Effect<A, E>): Effect.Effect<A, E | PoolTimeoutError> =>
      pendingTimeout === undefined ? wait : wait.pipe(Effect.timeoutFail({
        duration: pendingTimeout,
        onTimeout: () => new PoolTimeoutError({ timeoutMillis: Duration.toMillis(pendingTimeout), maxConcurrent })
      }))

    const claimSpare = <R>(options: Options.Options<R> | undefined): Option.Option<Spare> => {
      if (spares.length === 0 || waiters.length > 0) return Option.none()
      if (options !== undefined && !sameOptions(options, warmOptions)) return Option.none()
      const spare = spares.shift()
      return spare === undefined ? Option.none() : Option.some(spare)
    }

    const session: ClaudeAgent.ClaudeAgentShape["session"] = (options) =>
      Effect.gen(function*() {
        // The slot, once held (a claimed spare's or a new one), is released with the caller's scope.
        const claimed = yield* Effect.uninterruptibleMask((restore) =>
          Effect.gen(function*() {
            const spare = claimSpare(options)
            if (Option.isSome(spare)) {
              // The slot moves with the spare; its scope now ends with the caller's.
              active++
              yield* Effect.addFinalizer((exit) =>
                Scope.close(spare.value.scope, exit).pipe(
                  Effect.zipRight(Effect.sync(() => void active--)),
                  Effect.zipRight(publish({ _tag: "Released" })),
                  Effect.zipRight(releaseSlot)
                )
              )
              return spare
            }
            yield* acquireSlot(restore)
            active++
            yield* Effect.addFinalizer(() =>
              Effect.sync(() => void active--).pipe(
                Effect.zipRight(publish({ _tag: "Released" })),
                Effect.zipRight(releaseSlot)
              )
            )
            return spare
          })
        )
        if (Option.isSome(claimed)) {
          yield* publish({ _tag: "ClaimedWarm" })
          yield* watchCrash(claimed.value.session)
          yield* refill
          return claimed.value.session
        }
        yield* publish({ _tag: "Started" })
        const opened = yield* agent.session(options)
        yield* watchCrash(opened)
        return opened
      }).pipe(Effect.withSpan("AgentPool.session"))

    const watchCrash = (opened: AgentSession.AgentSession) =>
      opened.control.closed.pipe(
        Effect.catchAll((error) => publish({ _tag: "Crashed", error })),
        Effect.forkScoped
      )

    // ---- Keyed sessions --------------------------------------------------------------------

    const entryFor = (key: string): Keyed => {
      const existing = keyed.get(key)
      if (existing !== undefined) return existing
      const entry: Keyed = {
        key,
        lock: Effect.unsafeMakeSemaphore(1),
        holders: 0,
        sessionId: undefined,
        live: undefined,
        stopping: undefined
      }
      keyed.set(key, entry)
      return entry
    }

    // An entry with nothing to remember and nobody using it is dropped.
    const dropIfUnused = (entry: Keyed) => {
      if (entry.holders === 0 && entry.live === undefined && entry.sessionId === undefined && keyed.get(entry.key) === entry) {
        keyed.delete(entry.key)
      }
    }

    // Holds the entry (so it stays mapped) and its lock, until the current scope closes. A use
    // waits for the lock at most `pendingTimeout`; `forget` as long as it takes.
    const holdKey = <E>(key: string, wait: (take: Effect.Effect<number>) => Effect.Effect<number, E>) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.gen(function*() {
          const entry = entryFor(key)
          entry.holders++
          yield* Effect.addFinalizer(() =>
            Effect.sync(() => {
              entry.holders--
              dropIfUnused(entry)
            })
          )
          yield* restore(wait(entry.lock.take(1)))
          yield* Effect.addFinalizer(() => entry.lock.release(1))
          return entry
        })
      )

    // The process's watcher: a keyed session whose CLI exits while idle is retired at once (its
    // slot freed); one in use is retired when its use ends.
    const watchKeyed = (entry: Keyed, live: Live) =>
      live.session.control.closed.pipe(
        Effect.either,
        Effect.flatMap((ended) =>
          Effect.suspend(() => {
            live.dead = true
            const crash = ended._tag === "Left"
              ? publish({ _tag: "Crashed", error: ended.left, key: entry.key })
              : Effect.void
            if (entry.live !== live || live.inUse) return crash
            return Effect.zipRight(crash, retire(entry, live, "session-died"))
          })
        ),
        Effect.interruptible,
        Effect.forkIn(live.scope)
      )

    const adopt = (
      entry: Keyed,
      opened: AgentSession.AgentSession,
      scope: Scope.CloseableScope,
      options: Options.Options<unknown> | undefined
    ) =>
      Effect.suspend(() => {
        const live: Live = {
          session: opened,
          scope,
          options,
          inUse: true,
          dead: false,
          idleTimer: undefined,
          stopped: Deferred.unsafeMake(FiberId.none),
          resumeFailed: false
        }
        entry.live = live
        active++
        return Effect.as(watchKeyed(entry, live), live)
      })

    // Opens the key's process (holding its lock): a fresh conversation may claim a spare; a known
    // one is resumed on a new process.
    const openKeyed = <R>(entry: Keyed, options: Options.Options<R> | undefined, restore: Restore) =>
      Effect.gen(function*() {
        const sessionId = entry.sessionId
        if (sessionId === undefined) {
          const claimed = claimSpare(options)
          if (Option.isSome(claimed)) {
            const live = yield* adopt(entry, claimed.value.session, claimed.value.scope, options)
            yield* publish({ _tag: "ClaimedWarm", key: entry.key })
            yield* refill
            return live
          }
        }
        yield* acquireSlot(restore)
        const scope = yield* Scope.make()
        const opened = yield* Effect.gen(function*() {
          // Two processes must not write one conversation: the one stopped last must be gone.
          if (entry.stopping !== undefined) yield* restore(Deferred.await(entry.stopping))
          yield* publish({ _tag: "Started", key: entry.key })
          if (sessionId !== undefined) yield* publish({ _tag: "Resumed", key: entry.key, sessionId })
          return yield* restore(
            agent.session(sessionId === undefined ? options : resumeOptions(options, sessionId)).pipe(
              Scope.extend(scope),
              inPoolContext(entry.key)
            )
          )
        }).pipe(Effect.onError(() => Scope.close(scope, Exit.void).pipe(Effect.zipRight(releaseSlot))))
        return yield* adopt(entry, opened, scope, options)
      })

    // Ends a use: the session goes back to idle if the use read every turn it started to its end
    // and its CLI is alive; otherwise its process is stopped (the next use resumes it).
    const endUse = (
      entry: Keyed,
      live: Live,
      exit: Exit.Exit<unknown, unknown>,
      use: { readonly sent: number; readonly read: number; readonly resultsBefore: number }
    ) =>
      Effect.gen(function*() {
        const run = yield* live.session.control.runState
        const id = yield* live.session.control.lastSessionId
        const cancel = yield* Deferred.make<void>()
        return yield* Effect.suspend(() => {
          active--
          if (entry.live !== live) return Effect.void
          if (id !== undefined) entry.sessionId = id
          live.inUse = false
          if (live.resumeFailed) {
            // Resuming again would fail again: the next use starts a new conversation.
            entry.sessionId = undefined
            return retire(entry, live, "resume-failed")
          }
          if (live.dead) return retire(entry, live, "session-died")
          const finished = Exit.isSuccess(exit) && use.sent === use.read && run.results - use.resultsBefore === use.read
          if (!finished) return retire(entry, live, "unfinished")
          if (closed) return retire(entry, live, "pool-closed")
          if (waiters.length > 0) return retire(entry, live, "slot-needed")
          if (!Duration.isFinite(idleTimeToLive) || Duration.toMillis(idleTimeToLive) > 0) {
            idle.add(entry)
            live.idleTimer = cancel
            if (!Duration.isFinite(idleTimeToLive)) return Effect.void
            return Effect.raceFirst(
              Effect.as(Effect.sleep(idleTimeToLive), true),
              Effect.as(Deferred.await(cancel), false)
            ).pipe(
              Effect.flatMap((expired) =>
                expired && entry.live === live && !live.inUse ? retire(entry, live, "idle-expired") : Effect.void
              ),
              Effect.interruptible,
              Effect.forkIn(poolScope),
              Effect.asVoid
            )
          }
          return retire(entry, live, "idle-expired")
        })
      })

    // The session under `key` for the current scope, exclusively.
    const lease = <R>(
      key: string,
      options: Options.Options<R> | undefined
    ): Effect.Effect<AgentSession.AgentSession, SdkError, Scope.Scope | R> =>
      Effect.gen(function*() {
        if (closed) return yield* Effect.fail(new CLIConnectionError({ reason: "The agent pool is closed" }))
        const entry = yield* holdKey(key, withPendingTimeout)
        const current = entry.live
        if (current !== undefined && (current.dead || !sameKeyedOptions(current.options, options))) {
          yield* retire(entry, current, current.dead ? "session-died" : "options-changed")
        }
        return yield* Effect.uninterruptibleMask((restore) =>
          Effect.gen(function*() {
            const reused = entry.live
            let live: Live
            if (reused !== undefined) {
              idle.delete(entry)
              reused.inUse = true
              active++
              if (reused.idleTimer !== undefined) yield* Deferred.succeed(reused.idleTimer, undefined)
              reused.idleTimer = undefined
              yield* publish({ _tag: "Reused", key })
              live = reused
            } else {
              live = yield* openKeyed(entry, options, restore)
            }
            const use = { sent: 0, read: 0, resultsBefore: (yield* live.session.control.runState).results, ended: false }
            yield* Effect.addFinalizer((exit) =>
              Effect.suspend(() => {
                use.ended = true
                return endUse(entry, live, exit, use)
              })
            )
            return leased(live, use)
          })
        )
      }).pipe(Effect.withSpan("AgentPool.lease", { attributes: { key } }))

    // The session as one use sees it: counting the prompts it sends and the results it reads,
    // refusing to send once the use has ended, and failing its streams if the pool stops the
    // process under it (only closing the pool does, the process then ends without closing the
    // stream).
    const leased = (
      live: Live,
      use: { sent: number; read: number; readonly ended: boolean }
    ): AgentSession.AgentSession => {
      const opened = live.session
      const stopped = Deferred.await(live.stopped).pipe(
        Effect.zipRight(Effect.fail(new CLIConnectionError({ reason: "The agent pool was closed during this use" })))
      )
      const countResults = <E>(messages: Stream.Stream<Message.Message, E>) =>
        messages.pipe(
          Stream.mapChunks((chunk) => {
            // Counted as they leave the session's queue: a result taken here is not the next use's.
            for (const m of chunk) {
              if (m.type !== "result") continue
              use.read++
              if (isNoConversation(m)) live.resumeFailed = true
            }
            return chunk
          }),
          Stream.interruptWhen(stopped)
        )
      return {
        ...opened,
        send: (prompt) =>
          Effect.suspend(() => {
            if (use.ended) {
              return Effect.fail(
                new CLIConnectionError({ reason: "This use of the keyed session has ended: use it inside withSession" })
              )
            }
            use.sent++
            // The turn belongs to this use's trace (the session's span, the pool's, is linked).
            return Effect.flatMap(Effect.currentParentSpan.pipe(Effect.option), (span) =>
              Option.isSome(span) ? Effect.locally(opened.send(prompt), Turns.turnParent, span) : opened.send(prompt))
          }),
        messages: countResults(opened.messages),
        receiveResponse: countResults(opened.receiveResponse)
      }
    }

    const withSession: AgentPoolShape["withSession"] = (key, options, use) =>
      Effect.scoped(Effect.flatMap(lease(key, options), use))

    const chat: AgentPoolShape["chat"] = (key, prompt, options) =>
      Stream.unwrapScoped(Effect.gen(function*() {
        const s = yield* lease(key, options)
        yield* s.send(prompt)
        return s.receiveResponse.pipe(Query.requireResult)
      }))

    const forget = (key: string): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (!keyed.has(key)) return Effect.void
        return Effect.scoped(Effect.gen(function*() {
          const entry = yield* holdKey(key, identity)
          if (entry.live !== undefined) yield* retire(entry, entry.live, "forgotten")
          entry.sessionId = undefined
        }))
      })

    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        closed = true
        const pending = waiters.splice(0)
        const stopped = spares.splice(0)
        const lives = Array.from(keyed.values()).flatMap((entry) =>
          entry.live === undefined ? [] : [[entry, entry.live] as const]
        )
        return Effect.forEach(stopped, (spare) => Scope.close(spare.scope, Exit.void), {
          concurrency: "unbounded",
          discard: true
        }).pipe(
          Effect.zipRight(Effect.forEach(
            pending,
            (w) => Deferred.fail(w.granted, new CLIConnectionError({ reason: "The agent pool was closed" })),
            { discard: true }
          )),
          Effect.zipRight(Effect.forEach(lives, ([entry, live]) => retire(entry, live, "pool-closed"), {
            concurrency: "unbounded",
            discard: true
          })),
          Effect.zipRight(PubSub.shutdown(hub))
        )
      })
    )

    yield* refill

    return {
      session,
      query: Query.fromSessions(session),
      withSession,
      chat,
      forget,
      stats: Effect.sync((): PoolStats => ({
        active,
        idle: idle.size,
        warm: spares.length,
        starting,
        pending: waiters.length,
        maxConcurrent
      })),
      events: Stream.fromPubSub(hub)
    }
  })

/**
 * A pool over the `ClaudeAgent` in context, providing both `AgentPool` and a `ClaudeAgent` that
 * goes through the pool: code written against `ClaudeAgent` runs within the pool's limits.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { AgentPool, ClaudeAgent } from "effect-claude-agent"
 * import { FakeCli } from "effect-claude-agent/testing"
 *
 * const test = ClaudeAgent.query("hi").pipe(
 *   Stream.runCollect,
 *   Effect.provide(AgentPool.layerOver({ maxConcurrent: 2 })),
 *   Effect.provide(FakeCli.layerClaudeAgent())
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerOver = (
  config: PoolConfig = {}
): Layer.Layer<AgentPool | ClaudeAgent.ClaudeAgent, never, ClaudeAgent.ClaudeAgent> =>
  Layer.scopedContext(
    Effect.gen(function*() {
      const agent = yield* ClaudeAgent.ClaudeAgent
      const pool = yield* make(agent, config)
      return Context.make(AgentPool, pool).pipe(
        Context.add(ClaudeAgent.ClaudeAgent, { session: pool.session, query: pool.query })
      )
    })
  )

/**
 * A pool of real `claude` processes: `layerOver` on `ClaudeAgent.layer`. Provides `AgentPool`
 * and `ClaudeAgent`.
 *
 * @example
 * ```ts
 * import { NodeContext, NodeRuntime } from "@effect/platform-node"
 * import { Effect, Layer, Stream } from "effect"
 * import { AgentPool, ClaudeAgent } from "effect-claude-agent"
 *
 * const questions = ["What is 2 + 2?", "Name a prime", "Spell 'effect'"]
 * Effect.forEach(questions, (q) => ClaudeAgent.query(q).pipe(Stream.runDrain), { concurrency: "unbounded" }).pipe(
 *   Effect.provide(AgentPool.layer({ maxConcurrent: 2 }).pipe(Layer.provide(NodeContext.layer))),
 *   NodeRuntime.runMain
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  config: PoolConfig = {}
): Layer.Layer<
  AgentPool | ClaudeAgent.ClaudeAgent,
  never,
  FileSystem.FileSystem | Path.Path
> => layerOver(config).pipe(Layer.provide(ClaudeAgent.layer))
