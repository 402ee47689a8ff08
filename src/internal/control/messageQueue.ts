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
import { Chunk, Effect, Option, Stream } from "effect"
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
  /** Ends the queue after what it holds; `error` undefined: a clean end. First call wins. */
  readonly end: (error: StreamError | undefined) => void
  /** Ends the queue with an error made only if someone reads it. First call wins. */
  readonly endLazily: (error: () => StreamError) => void
  /** The messages, as a single-consumer stream. */
  readonly stream: Stream.Stream<unknown, StreamError>
}

type Pull = Effect.Effect<Chunk.Chunk<unknown>, Option.Option<StreamError>>

// The take behind each queue's stream: its single consumer (the session's message pull) takes
// from it directly, without `Stream.toPull`'s channel around every take.
const pulls = new WeakMap<Stream.Stream<unknown, StreamError>, Pull>()

/**
 * The take behind `stream` when a `MessageQueue` made it (fails with `None` at the end, as
 * `Stream.toPull`'s pull does); `undefined` for any other stream.
 *
 * @internal
 */
export const pullOf = (stream: Stream.Stream<unknown, StreamError>): Pull | undefined => pulls.get(stream)

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

    const take: Pull = Effect.suspend(() => {
      if (queue.length > 0) {
        const taken = queue
        queue = []
        queuedBytes = 0
        space.unsafeOpen()
        if (ended === undefined) ready.unsafeClose()
        return Effect.succeed(Chunk.unsafeFromArray(taken))
      }
      if (ended !== undefined) {
        const error = ended.error()
        return Effect.fail(error === undefined ? Option.none() : Option.some(error))
      }
      return Effect.zipRight(ready.await, take)
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
    pulls.set(stream, take)
    return {
      offer: (messages, bytes) =>
        Effect.suspend(() => {
          if (ended !== undefined) return Effect.void
          if (queue.length === 0) queue = messages
          else for (const message of messages) queue.push(message)
          queuedBytes += bytes
          ready.unsafeOpen()
          if (queuedBytes < cap) return Effect.void
          space.unsafeClose()
          return waitForSpace()
        }),
      end: (error) => endWith(() => error),
      endLazily: (error) => {
        let made: StreamError | undefined
        endWith(() => made ??= error())
      },
      stream
    }
  })
