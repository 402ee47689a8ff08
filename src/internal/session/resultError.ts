// A failed `result` message as a `ResultError` (shared by `ClaudeAgent.failOnErrorResult` and
// `Structured.decode`, so that a failed run reads the same whichever way it is consumed), and the
// stream stage that ends a run at its first one.
import { Channel, Chunk, Stream } from "effect"
import * as Message from "../../schema/Message.js"
import { ResultError } from "../../SdkError.js"

export const fromResult = (m: Message.ResultMessage): ResultError => {
  const detail = "result" in m && typeof m.result === "string"
    ? m.result
    : "errors" in m && Array.isArray(m.errors)
    ? m.errors.join("; ")
    : m.subtype
  return new ResultError({
    subtype: m.subtype,
    ...(typeof m.terminal_reason === "string" ? { terminalReason: m.terminal_reason } : {}),
    ...(typeof m.api_error_status === "number" ? { apiErrorStatus: m.api_error_status } : {}),
    detail,
    raw: m
  })
}

type Messages = Chunk.Chunk<Message.Message>

// The messages up to the first error `result`, then its `ResultError`: a channel stage that looks at
// each chunk in plain code. `Stream.mapEffect` would run an effect per message, and an effect per
// element that holds the element keeps it past young collections in Effect's channel executor
// (docs/performance.md, "The floor's messages").
const untilErrorResult = <E>(): Channel.Channel<Messages, Messages, E | ResultError, E, unknown, unknown> => {
  const loop: Channel.Channel<Messages, Messages, E | ResultError, E, unknown, unknown> = Channel.readWithCause({
    onInput: (chunk: Messages) => {
      let at = 0
      for (const m of chunk) {
        if (Message.isErrorResult(m)) {
          const failed = Channel.fail(fromResult(m))
          return at === 0 ? failed : Channel.zipRight(Channel.write(Chunk.take(chunk, at)), failed)
        }
        at++
      }
      return Channel.zipRight(Channel.write(chunk), loop)
    },
    onFailure: Channel.failCause,
    onDone: Channel.succeed
  })
  return loop
}

/**
 * `self` up to its first error `result`, which ends it with a `ResultError`.
 *
 * @internal
 */
export const failAtErrorResult = <E, R>(
  self: Stream.Stream<Message.Message, E, R>
): Stream.Stream<Message.Message, E | ResultError, R> => Stream.pipeThroughChannelOrFail(self, untilErrorResult<E>())
