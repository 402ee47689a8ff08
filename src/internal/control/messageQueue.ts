/**
 * The queue of messages between the reader and the user: unbounded as a queue, bounded by bytes
 * here, so that below the cap the reader never waits for the consumer and control traffic keeps
 * flowing while messages pile up. The reader appends a chunk's messages to one array and the
 * consumer takes the whole array (no copy per offer, no `Chunk` conversion per take).
 *
 * Shared by exactly two fibers, the reader and the consumer; every step runs synchronously, so no
 * interleaving sees it half-updated. Waiting goes through two latches: `ready` (something to
 * take, or the end) and `space` (below the cap).
 *
 * @internal
 */
import { Chunk, Effect, Option, type Scope, Stream } from "effect"
import type { StreamError } from "../../services/ControlChannel.js"

/**
 * The queue's operations: the reader offers and ends, the user reads `stream`.
 *
 * @internal
 */
export interface MessageQueue {
  /**
   * Appends a chunk's messages and their size in bytes (ignored once the queue has ended); at the
   * cap, waits until the consumer has taken them, warning the first time.
   */
  readonly offer: (messages: Array<unknown>, bytes: number) => Effect.Effect<void>
  /**
   * `offer`, done now: appends the messages, and returns the wait for the consumer when the
   * queue is at its cap (`undefined` below it). For a caller that would run the offer at once.
   */
  readonly push: (messages: Array<unknown>, bytes: number) => Effect.Effect<void> | undefined
  /** Ends the queue after what it holds; `error` undefined: a clean end. First call wins. */
  readonly end: (error: StreamError | undefined) => void
  /** Ends the queue with an error made only if someone reads it. First call wins. */
  readonly endLazily: (error: () => StreamError) => void
  /** The messages, as a single-consumer stream. */
  readonly stream: Stream.Stream<unknown, StreamError>
}

/**
 * The consumer's side of a queue, as plain calls and one wait: its single consumer (the session's
 * message pull) takes what is queued and decodes it in the same step, with no effect around each
 * take.
 *
 * @internal
 */
export interface Source {
  /** Everything queued, taken at once; `undefined` when nothing is. */
  readonly poll: () => Array<unknown> | undefined
  /** Once nothing is queued: how the queue ended (`None`: cleanly), or `undefined` while it has not. */
  readonly ended: () => Option.Option<StreamError> | undefined
  /** Waits until `poll` or `ended` has an answer. */
  readonly ready: Effect.Effect<void>
}

const sources = new WeakMap<Stream.Stream<unknown, StreamError>, Source>()

/**
 * The source behind `stream` when a `MessageQueue` made it; `undefined` for any other stream.
 *
 * @internal
 */
export const sourceOf = (stream: Stream.Stream<unknown, StreamError>): Source | undefined => sources.get(stream)

/**
 * A `Source` over any stream of messages (a `ControlChannel` made by other means): each wait pulls
 * the stream's next chunk.
 *
 * @internal
 */
export const toSource = (
  stream: Stream.Stream<unknown, StreamError>
): Effect.Effect<Source, never, Scope.Scope> =>
  Effect.map(Stream.toPull(stream), (pull) => {
    let held: Array<unknown> | undefined
    let end: Option.Option<StreamError> | undefined
    const ready = Effect.matchEffect(pull, {
      onFailure: (error) => Effect.sync(() => end = error),
      onSuccess: (chunk) => Effect.sync(() => held = Chunk.isEmpty(chunk) ? held : Chunk.toArray(chunk))
    })
    return {
      poll: () => {
        const taken = held
        held = undefined
        return taken
      },
      ended: () => end,
      ready
    }
  })

/**
 * A queue bounded at `cap` bytes.
 *
 * @internal
 */
export const make = (cap: number): Effect.Effect<MessageQueue> =>
  Effect.sync(() => {
    let queue: Array<unknown> = []
    let queuedBytes = 0
    let ended: { readonly error: () => StreamError | undefined } | undefined
    let warned = false
    const ready = Effect.unsafeMakeLatch(false)
    const space = Effect.unsafeMakeLatch(true)

    const poll = (): Array<unknown> | undefined => {
      if (queue.length === 0) return undefined
      const taken = queue
      queue = []
      queuedBytes = 0
      space.unsafeOpen()
      if (ended === undefined) ready.unsafeClose()
      return taken
    }
    const source: Source = {
      poll,
      ended: () => {
        if (ended === undefined) return undefined
        const error = ended.error()
        return error === undefined ? Option.none() : Option.some(error)
      },
      ready: ready.await
    }
    const take: Effect.Effect<Chunk.Chunk<unknown>, Option.Option<StreamError>> = Effect.suspend(() => {
      const taken = poll()
      if (taken !== undefined) return Effect.succeed(Chunk.unsafeFromArray(taken))
      const end = source.ended()
      return end === undefined ? Effect.zipRight(ready.await, take) : Effect.fail(end)
    })

    const endWith = (error: () => StreamError | undefined) => {
      if (ended !== undefined) return
      ended = { error }
      ready.unsafeOpen()
    }

    const waitForSpace = (): Effect.Effect<void> => {
      if (warned) return space.await
      warned = true
      return Effect.zipRight(
        Effect.logWarning(
          `effect-claude-agent: ${queuedBytes} bytes of messages are waiting for the consumer ` +
            `(messageBufferBytes ${cap}): reading from the CLI now waits for it, and so do the ` +
            `CLI's hook, permission and tool requests. Consume messages faster or raise messageBufferBytes.`
        ),
        space.await
      )
    }

    const stream = Stream.repeatEffectChunkOption(take)
    sources.set(stream, source)
    const push = (messages: Array<unknown>, bytes: number): Effect.Effect<void> | undefined => {
      if (ended !== undefined) return undefined
      if (queue.length === 0) queue = messages
      else for (const message of messages) queue.push(message)
      queuedBytes += bytes
      ready.unsafeOpen()
      if (queuedBytes < cap) return undefined
      space.unsafeClose()
      return waitForSpace()
    }
    return {
      offer: (messages, bytes) => Effect.suspend(() => push(messages, bytes) ?? Effect.void),
      push,
      end: (error) => endWith(() => error),
      endLazily: (error) => {
        let made: StreamError | undefined
        endWith(() => made ??= error())
      },
      stream
    }
  })
