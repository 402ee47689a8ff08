/**
 * The pull behind a session's `messages` and `receiveResponse`: frames from the control channel,
 * decoded into `Message`s, cut at each turn's `result`.
 *
 * @internal
 */
import { Chunk, Effect, Option, Predicate, Schema, type Scope, Stream } from "effect"
import * as Control from "../../schema/Control.js"
import * as Message from "../../schema/Message.js"
import type { BudgetExceededError, MessageParseError } from "../../SdkError.js"
import type { RequestError, StreamError } from "../../services/ControlChannel.js"
import type { SessionStoreError } from "../../services/SessionStore.js"
import type { InitState } from "./initialize.js"
import { BudgetFailure } from "../budget/guard.js"
import * as Drain from "../control/drain.js"
import * as MessageQueue from "../control/messageQueue.js"
import * as Guard from "../schema/guard.js"
import { MirrorFailure } from "./mirror.js"

/**
 * What a pull fails with: the channel's stream, a frame that breaks its schema, `initialize`, or
 * an append to the session store (with `sessionStoreFailure: "fail"`), or a `Budget` cap the running
 * turn crossed.
 *
 * @internal
 */
export type PullError = StreamError | MessageParseError | RequestError | SessionStoreError | BudgetExceededError

/**
 * The two streams over one pull, and the commands of the latest `system/commands_changed`.
 *
 * @internal
 */
export interface MessagePull {
  readonly messages: Stream.Stream<Message.Message, PullError>
  readonly receiveResponse: Stream.Stream<Message.Message, PullError>
  /** `undefined` until a `system/commands_changed` frame has been read. */
  readonly latestCommands: () => ReadonlyArray<Control.SlashCommand> | undefined
}

type Pull = Effect.Effect<Chunk.Chunk<Message.Message>, Option.Option<PullError>>

// The pull behind each `messages` stream, for a consumer that takes from it directly.
const pulls = new WeakMap<object, Pull>()

/**
 * The pull behind a `MessagePull`'s `messages` (fails with `None` at the end, as `Stream.toPull`'s
 * does); `undefined` for any other stream.
 *
 * @internal
 */
export const pullOf = (stream: Stream.Stream<Message.Message, unknown>): Pull | undefined => pulls.get(stream)

// `passed` counts the frames at the head of `frames` that `Message.decode` passed as they are, so
// when it counts them all, each is the message it was decoded to.
const passedAsIs = (frames: ReadonlyArray<unknown>, passed: number): frames is ReadonlyArray<Message.Message> =>
  passed === frames.length
const copiedAsIs = (frames: Array<unknown>, passed: number): frames is Array<Message.Message> =>
  passed === frames.length

const isResultFrame = (frame: unknown): boolean => Predicate.isRecord(frame) && frame.type === "result"

const CommandsChanged = Schema.Struct({ commands: Schema.Array(Control.SlashCommand) })
const decodeCommandsChanged = Guard.lazily(() => Schema.decodeUnknownOption(CommandsChanged))

// The commands of a `system/commands_changed` frame (the CLI sends one after `reload_skills`).
const changedCommands = (frame: unknown): Option.Option<ReadonlyArray<Control.SlashCommand>> =>
  Predicate.isRecord(frame) && frame.type === "system" && frame.subtype === "commands_changed"
    ? Option.map(decodeCommandsChanged(frame), (changed) => changed.commands)
    : Option.none()

/**
 * What a pull delivers beyond what the official SDK does.
 *
 * @internal
 */
export interface PullOptions {
  /** `command_lifecycle` messages (the CLI reports them for prompts sent with a `uuid`). */
  readonly includeCommandLifecycle?: boolean | undefined
  /** `system/session_state_changed` messages the CLI marks `sdk_host_only`. */
  readonly includeSessionState?: boolean | undefined
}

/**
 * Makes the pull over `frames`. Until `initialize` is answered a pull also ends with its failure,
 * and once it has failed every pull does.
 *
 * @internal
 */
export const make = (
  frames: Stream.Stream<unknown, StreamError>,
  init: InitState,
  options: PullOptions = {}
): Effect.Effect<MessagePull, never, Scope.Scope> =>
  Effect.gen(function*() {
    const source = MessageQueue.sourceOf(frames) ?? (yield* MessageQueue.toSource(frames))
    // A failed handshake stops the CLI (see `Initialize.handshake`), so a pull waiting for frames
    // then ends: with the handshake's failure, which says more than the end of the output.
    const endOf = (end: Option.Option<StreamError>): Option.Option<PullError> => {
      const failed = init.answered() ? undefined : init.error()
      return failed === undefined ? end : Option.some(failed)
    }

    // Frames taken from the channel but not yet emitted: a turn's stream stops at its `result`,
    // and whatever followed it in the same chunk waits here for the next consumer.
    let leftover: Array<unknown> = []
    // A frame that failed decoding, or a failed store append, fails the pull after the frames
    // before it were delivered.
    let pendingError: MessageParseError | SessionStoreError | BudgetExceededError | undefined
    // After a failed store append: the rest of the failed turn, up to its `result`, is dropped so
    // that the next turn's stream starts at the next turn.
    let skipTurn = false
    let latestCommands: ReadonlyArray<Control.SlashCommand> | undefined
    // Whether the last chunk ended at a `result`.
    let endsTurn = false
    // `send` gives every prompt a uuid (`rewindFiles` takes it), so the CLI reports the prompt's
    // `command_lifecycle`; the official SDK sends none and its users never see those messages.
    const dropLifecycle = options.includeCommandLifecycle !== true
    // Nor does it deliver the run states the CLI writes for the SDK alone (the control channel has
    // read them before this: `runState`).
    const dropHostOnly = options.includeSessionState !== true
    const hidden = (m: Message.Message): boolean =>
      m.type === "command_lifecycle"
        ? dropLifecycle
        : m.type === "system" && m.subtype === "session_state_changed" && m.sdk_host_only === true && dropHostOnly

    // The usual chunk's frames are all delivered as they are (`Message.decode` passes a valid frame
    // through): it goes on in the array it was taken in. `out` is built only from the first frame
    // left out or replaced, or when a turn ends inside the chunk. No array per chunk on the hot
    // path: an array literal whose arrays once outlived a young collection gets allocated in the
    // old generation by V8, and an old array holding a chunk's frames keeps them past every young
    // collection until the next full one (docs/performance.md, "Warm-up and deoptimisations").
    const emit = (frames: ReadonlyArray<unknown>): Chunk.Chunk<Message.Message> => {
      let passed = 0
      let out: Array<Message.Message> | undefined
      // The frames before the first that is not delivered as it is, as messages.
      const head = (): Array<Message.Message> => {
        const kept = frames.slice(0, passed)
        return copiedAsIs(kept, passed) ? kept : []
      }
      for (let i = 0; i < frames.length; i++) {
        const frame = frames[i]
        if (skipTurn) {
          out ??= head()
          if (isResultFrame(frame)) skipTurn = false
          continue
        }
        const decoded = Message.decode(frame)
        if (decoded._tag === "Left") {
          out ??= head()
          // The mirror's failures are not frames: told apart only once decoding has refused one.
          if (frame instanceof MirrorFailure || frame instanceof BudgetFailure) {
            pendingError = frame.error
            skipTurn = true
          } else {
            pendingError = decoded.left
          }
          leftover = frames.slice(i + 1)
          break
        }
        const message = decoded.right
        if (hidden(message)) {
          out ??= head()
          continue
        }
        if (out !== undefined) out.push(message)
        else if (message === frame) passed++
        else (out = head()).push(message)
        const commands = changedCommands(frame)
        if (Option.isSome(commands)) latestCommands = commands.value
        if (isResultFrame(frame)) {
          endsTurn = true
          if (i + 1 < frames.length) {
            out ??= head()
            leftover = frames.slice(i + 1)
          }
          break
        }
      }
      if (out !== undefined) return Chunk.unsafeFromArray(out)
      return passedAsIs(frames, passed) ? Chunk.unsafeFromArray(frames) : Chunk.unsafeFromArray(head())
    }

    // The next messages (`undefined`: the end): what is queued, decoded in the same step, with a
    // wait only when nothing is. For `receiveResponse`, `turn` ends it after the chunk that holds
    // the turn's result (`takeUntil(isResult)` without a stage of its own).
    const next = (turn: { done: boolean } | undefined) => {
      const deliver = (frames: ReadonlyArray<unknown>) => {
        const chunk = emit(frames)
        if (turn !== undefined && endsTurn) turn.done = true
        return Effect.succeed(chunk)
      }
      const step: Effect.Effect<Chunk.Chunk<Message.Message> | undefined, PullError> = Effect.suspend(() => {
        if (turn?.done === true) return Effect.succeed(undefined)
        endsTurn = false
        if (pendingError !== undefined) {
          const e = pendingError
          pendingError = undefined
          return Effect.fail(e)
        }
        const failed = init.error()
        if (failed !== undefined) return Effect.fail(failed)
        if (leftover.length > 0) {
          const taken = leftover
          leftover = []
          return deliver(taken)
        }
        const taken = source.poll()
        if (taken !== undefined) return deliver(taken)
        const end = source.ended()
        if (end === undefined) return Effect.zipRight(source.ready, step)
        const ended = endOf(end)
        return Option.isNone(ended) ? Effect.succeed(undefined) : Effect.fail(ended.value)
      })
      return step
    }

    const messagesNext = next(undefined)
    const messages: Stream.Stream<Message.Message, PullError> = Drain.streamOf(messagesNext)
    // The same pull in `Stream.toPull`'s shape (the end as a failure with `None`), for `pullOf`.
    pulls.set(
      messages,
      Effect.flatMap(
        Effect.mapError(messagesNext, Option.some),
        (chunk) => chunk === undefined ? Effect.fail(Option.none()) : Effect.succeed(chunk)
      )
    )
    const receiveResponse: Stream.Stream<Message.Message, PullError> = Stream.suspend(() =>
      Drain.streamOf(next({ done: false }))
    )
    return { messages, receiveResponse, latestCommands: () => latestCommands }
  })
