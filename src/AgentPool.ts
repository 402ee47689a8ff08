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
 * With a `sessionStore` in the key's options the conversation is resumed from the store, on any
 * host; a conversation the store does not have fails that use with `SessionNotFoundError` (or
 * starts anew with `resumeMissing: "new"`), and the key's next use starts a new one.
 *
 * Closing the pool's scope leaves nothing running: waiting requests fail with `PoolClosedError`,
 * running ones get `shutdownTimeout` to finish and are then interrupted, and the close returns
 * once every process the pool started has exited.
 *
 * @since 0.1.0
 */
import type { FileSystem, Path } from "@effect/platform"
import { Clock, Context, Duration, Effect, FiberRef, Layer, Option, PubSub, type Scope, Stream } from "effect"
import type * as AgentSession from "./AgentSession.js"
import * as ClaudeAgent from "./ClaudeAgent.js"
import * as PoolBudget from "./internal/budget/pool.js"
import * as Config from "./internal/pool/config.js"
import * as KeyedLeases from "./internal/pool/keyedLeases.js"
import * as Requests from "./internal/pool/requests.js"
import * as Shutdown from "./internal/pool/shutdown.js"
import * as Slots from "./internal/pool/slots.js"
import * as Spares from "./internal/pool/spares.js"
import * as Query from "./internal/session/query.js"
import type * as Message from "./schema/Message.js"
import type * as Options from "./schema/Options.js"
import { type ClaimRefusalReason, OptionsError, type SdkError } from "./SdkError.js"
import * as Streams from "./internal/effect/streams.js"

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
  /** The pool's name: the id its `Budget` caps of scope `pool` are kept under. Default `"default"`. */
  readonly name?: string | undefined
  /** At most this many CLI processes at once, spares included: a positive integer. Default `min(4, cores)`. */
  readonly maxConcurrent?: number | undefined
  /** At most this many requests waiting for a process; one more fails with `PoolFullError`. An integer ≥ 0. Default 1000. */
  readonly maxPending?: number | undefined
  /** How long a request may wait for a process before it fails with `PoolTimeoutError`. Default: no limit. */
  readonly pendingTimeout?: Duration.DurationInput | undefined
  /** How many started-and-initialized spares to keep ready: an integer ≥ 0. Default 0. */
  readonly warm?: number | undefined
  /**
   * The options spares are started with. A request claims a spare only when its options are the
   * same (callbacks compared by identity), or when it gives none. Default `{}`.
   */
  readonly warmOptions?: Options.Options | undefined
  /**
   * Parks the spares (`ClaudeAgent.park`): each is started with `--await-claim` under the
   * host-level half of `warmOptions`, in a neutral directory, and any request whose host-level
   * options are the same claims one, whatever its `cwd`, `model`, `permissionMode`,
   * `maxThinkingTokens`, `additionalDirectories`, `agents`, `title` and claim environment
   * variables (`Options.claimOptionKeys`). A request without a `cwd` is bound to the process's
   * working directory. A refused claim (`ClaimRefused`: its prompt never ran) falls back to a cold
   * start in the same slot (`ClaimFellBack` event). A keyed conversation that resumes cannot claim
   * a spare (a spare has no session). Default `false`: a spare serves only requests whose options
   * equal `warmOptions`.
   */
  readonly park?: boolean | undefined
  /**
   * How long a keyed session (`chat`, `withSession`) stays open while nobody uses it; then its
   * process is stopped (its conversation is resumed at the next use). Idle sessions count towards
   * `maxConcurrent`, and the least recently used one is stopped sooner when a request needs its
   * slot. Zero stops the process after every use. Default 5 minutes.
   */
  readonly idleTimeToLive?: Duration.DurationInput | undefined
  /**
   * When the pool closes, how long the requests and keyed uses still running may take to finish
   * their turns; then the pool interrupts them through the protocol, stops their CLIs and fails
   * them with `PoolClosedError`. Zero stops them at once. The close returns once every process
   * the pool started has exited. Finite. Default 2 seconds.
   */
  readonly shutdownTimeout?: Duration.DurationInput | undefined
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
  /** A request claimed a warm spare (`key`: as that keyed session); `cwd`: the folder a parked spare was bound to. */
  | { readonly _tag: "ClaimedWarm"; readonly key?: string | undefined; readonly cwd?: string | undefined }
  /**
   * A parked spare's claim was refused (`park`); the request starts cold in the spare's slot. The
   * spare's process is stopped.
   */
  | {
    readonly _tag: "ClaimFellBack"
    readonly reason: ClaimRefusalReason
    readonly code?: string | undefined
    readonly key?: string | undefined
  }
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
  /** Requests (and keyed sessions) that claimed a spare, since the pool started. */
  readonly claimed: number
  /** Claims of a parked spare that were refused and fell back to a cold start, since the pool started. */
  readonly claimsFellBack: number
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
  Streams.unwrap(Effect.map(AgentPool, (pool) => pool.chat(key, prompt, options)))

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

/**
 * Runs `effect` with a queue priority for the pool requests it makes: a waiting request with a
 * higher priority gets the next free process first; equal priorities are served in arrival order.
 * Default 0. Anything but a finite number fails with `OptionsError` (field `priority`).
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
export const withPriority =
  (priority: number) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | OptionsError, R> => {
    const given: unknown = priority
    return typeof given === "number" && Number.isFinite(given)
      ? Effect.locally(effect, Slots.priorityRef, given)
      : Effect.fail(
        new OptionsError({
          field: "priority",
          detail: `expected a finite number; got ${JSON.stringify(given) ?? String(given)}`
        })
      )
  }

const defaultMaxConcurrent = (): number => {
  const os: unknown = Reflect.get(globalThis, "navigator")
  const cores = typeof os === "object" && os !== null && "hardwareConcurrency" in os &&
      typeof os.hardwareConcurrency === "number"
    ? os.hardwareConcurrency
    : 4
  return Math.max(1, Math.min(4, cores))
}

// What a keyed session's long-lived fibers (its reader, the callbacks it runs) log and trace
// with: the pool's, not those of whichever use happened to open it. The opening gets a span of
// its own, under the pool's span or a root, linked to the use that asked for it: the session's
// span (its whole life) sits under it.
const capturePoolContext = Effect.gen(function*() {
  const poolSpan = yield* Effect.currentParentSpan.pipe(Effect.option)
  const poolLoggers = yield* FiberRef.get(FiberRef.currentLoggers)
  const poolAnnotations = yield* FiberRef.get(FiberRef.currentLogAnnotations)
  const poolLogSpans = yield* FiberRef.get(FiberRef.currentLogSpan)
  return (key: string) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
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
})

/**
 * Builds a pool over `agent` (which opens the sessions) in the current scope. Fails with
 * `OptionsError` when a setting is invalid. Closing the scope refuses new requests, fails those
 * waiting and stops the spares and idle keyed sessions; the requests and keyed uses still
 * running get `shutdownTimeout` to finish, then are interrupted and fail with
 * `PoolClosedError`. The close returns once every process the pool started has exited.
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
): Effect.Effect<AgentPoolShape, OptionsError, Scope.Scope> =>
  Effect.gen(function*() {
    const settings = yield* Config.validate(config, defaultMaxConcurrent())
    const { maxConcurrent } = settings
    const inPoolContext = yield* capturePoolContext
    const hub = yield* PubSub.unbounded<PoolEvent>()
    const counts = { claimed: 0, claimsFellBack: 0 }
    const publish = (event: PoolEvent) =>
      Effect.suspend(() => {
        if (event._tag === "ClaimedWarm") counts.claimed++
        else if (event._tag === "ClaimFellBack") counts.claimsFellBack++
        return PubSub.publish(hub, event)
      })
    const shutdown = Shutdown.make()
    const slots = Slots.make({
      maxConcurrent,
      maxPending: settings.maxPending,
      pendingTimeout: settings.pendingTimeout,
      // A spare first, else the least recently used idle keyed session.
      reclaim: () => Option.orElse(spares.reclaim(), () => leases.reclaim()),
      onFree: Effect.suspend(() => spares.refill),
      onQueued: (pending) => publish({ _tag: "Queued", pending })
    })
    const spares = yield* Spares.make({
      agent,
      warm: settings.warm,
      warmOptions: settings.warmOptions,
      park: settings.park,
      slots,
      publish
    })
    const leases = yield* KeyedLeases.make({
      agent,
      slots,
      spares,
      publish,
      idleTimeToLive: settings.idleTimeToLive,
      shutdown,
      inPoolContext
    })
    const requests = Requests.make({ agent, slots, spares, publish, shutdown, name: settings.name })
    yield* Effect.addFinalizer(() =>
      closePool({ slots, spares, leases, requests, shutdown, shutdownTimeout: settings.shutdownTimeout }).pipe(
        Effect.zipRight(PubSub.shutdown(hub))
      )
    )
    yield* spares.refill

    const stoppedStream = Shutdown.stoppedStream(shutdown)
    // Under a `Budget`, a key's use is checked before it waits, and its session charged to the key.
    const lookup = <R>(key: string, options: Options.Options<R> | undefined) =>
      PoolBudget.request(settings.name, key, options, () => leases.lookup(key, options))
    return {
      session: requests.session,
      query: (prompt, options) => Query.fromSessions(requests.session)(prompt, options).pipe(stoppedStream),
      withSession: (key, options, use) =>
        Effect.scoped(Effect.flatMap(lookup(key, options), use)).pipe(Shutdown.stoppedEffect(shutdown)),
      chat: (key, prompt, options) =>
        Streams.unwrapScoped(Effect.gen(function*() {
          const s = yield* lookup(key, options)
          yield* s.send(prompt)
          return s.receiveResponse.pipe(Query.requireResult)
        })).pipe(stoppedStream),
      forget: leases.invalidate,
      stats: Effect.sync((): PoolStats => ({
        active: requests.active() + leases.inUse(),
        idle: leases.idle(),
        warm: spares.ready(),
        starting: spares.starting(),
        pending: slots.pending(),
        maxConcurrent,
        claimed: counts.claimed,
        claimsFellBack: counts.claimsFellBack
      })),
      events: Stream.fromPubSub(hub)
    }
  })

// The close: no more requests, none waiting, no spare nor idle keyed session; the running ones
// get `shutdownTimeout` to end, then are stopped. Each step returns once its processes have exited.
const closePool = (parts: {
  readonly slots: Slots.Slots
  readonly spares: Spares.Spares
  readonly leases: KeyedLeases.KeyedLeases
  readonly requests: Requests.Requests
  readonly shutdown: Shutdown.Shutdown
  readonly shutdownTimeout: Duration.Duration
}) =>
  Effect.gen(function*() {
    const { leases, requests, shutdownTimeout, slots, spares } = parts
    yield* slots.close()
    yield* Effect.all([spares.close(), leases.closeIdle], { concurrency: "unbounded", discard: true })
    if (Duration.greaterThan(shutdownTimeout, Duration.zero)) {
      yield* Effect.all([requests.awaitAll, leases.awaitUses], { concurrency: "unbounded", discard: true }).pipe(
        Effect.interruptible,
        Effect.timeout(shutdownTimeout),
        Effect.ignore
      )
    }
    yield* Shutdown.force(parts.shutdown)
    // Through the protocol first: a turn being read then fails at its `result`, and its reader
    // ends its use, which stops its process.
    yield* Effect.all([requests.interruptAll, leases.interruptUses], { concurrency: "unbounded", discard: true })
    yield* Effect.all([requests.awaitAll, leases.awaitUses], { concurrency: "unbounded", discard: true }).pipe(
      Effect.interruptible,
      Effect.timeout(readersEnd),
      Effect.ignore,
      Effect.withClock(liveClock)
    )
    yield* Effect.all([requests.stopAll, leases.stopAll], { concurrency: "unbounded", discard: true })
  }).pipe(Effect.withSpan("AgentPool.close"))

// How long the close waits for the readers of interrupted turns to end their uses themselves, on
// the live clock (a test's TestClock need not move for it); the sessions nobody reads are then
// stopped by the pool.
const readersEnd = Duration.seconds(1)
const liveClock = Clock.make()

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
): Layer.Layer<AgentPool | ClaudeAgent.ClaudeAgent, OptionsError, ClaudeAgent.ClaudeAgent> =>
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
  OptionsError,
  FileSystem.FileSystem | Path.Path
> => layerOver(config).pipe(Layer.provide(ClaudeAgent.layer))
