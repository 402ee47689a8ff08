/**
 * A keyed session as one use (one lease) sees it.
 *
 * @internal
 */
import { Deferred, Effect, Option, Stream } from "effect"
import type * as AgentSession from "../../AgentSession.js"
import type * as Message from "../../schema/Message.js"
import { CLIConnectionError } from "../../SdkError.js"
import * as Turns from "../session/turns.js"
import { isNoConversation } from "./options.js"

/**
 * What one use of a keyed session did: the prompts it sent, the results it read, the session's
 * result count when it began; `ended` once its scope has closed.
 *
 * @internal
 */
export interface Use {
  sent: number
  read: number
  readonly resultsBefore: number
  ended: boolean
}

/**
 * The leased process, as far as a use sees it.
 *
 * @internal
 */
export interface LeasedProcess {
  readonly session: AgentSession.AgentSession
  /** Completed once the pool has stopped the process. */
  readonly stopped: Deferred.Deferred<void>
  /** Set when the CLI answered a prompt with "No conversation found". */
  resumeFailed: boolean
}

/**
 * The session as one use sees it: counting the prompts it sends and the results it reads,
 * refusing to send once the use has ended, and failing its streams if the pool stops the
 * process under it (only closing the pool does; the process then ends without closing the
 * stream).
 *
 * @internal
 */
export const leased = (live: LeasedProcess, use: Use): AgentSession.AgentSession => {
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
