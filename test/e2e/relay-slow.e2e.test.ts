// A slow consumer behind the relay: the host stops reading messages for longer than the
// heartbeat timeout while the CLI streams about 9 MB. With a 256 KiB message buffer the host's
// reader stops taking output, so it grants no more credit and the relay holds the CLI's output
// back after its 4 MiB of credit, instead of the host's socket filling up. Heartbeats go on while
// the output waits, and once the consumer reads again nothing is missing.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Option, Stream } from "effect"
import * as Message from "../../src/schema/Message.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"
import { relayAgent, startRelay } from "./relaySupport.js"

// 32k text deltas: each is one `stream_event` line of ~300 bytes, about 9 MB in all.
const CHUNK = 8
const text = Array.from({ length: 32_000 }, (_, i) => String(i % 100_000_000).padStart(CHUNK, "0")).join("")

const deltaText = (m: Message.Message): string => {
  if (m.type !== "stream_event") return ""
  const event = m.event
  return event.type === "content_block_delta" && event.delta.type === "text_delta" ? event.delta.text : ""
}

describe("e2e: a slow consumer behind the relay", () => {
  it.scopedLive(
    "messages wait while the host does not read, past the heartbeat timeout; nothing is lost",
    () =>
      Effect.gen(function*() {
        const relay = yield* startRelay({
          CLAUDE_RELAY_HEARTBEAT: "500 millis",
          CLAUDE_RELAY_HEARTBEAT_TIMEOUT: "2 seconds"
        })
        const model = yield* ScriptedModel.make([
          {
            match: (req) => ScriptedModel.lastUserText(req).includes("flood"),
            reply: ScriptedModel.slowText(text, { chunkSize: CHUNK, delayMs: 0 })
          },
          { match: (req) => ScriptedModel.lastUserText(req).includes("again"), reply: ScriptedModel.text("still here") }
        ])
        const options = yield* model.options()
        const agent = relayAgent(relay.url, { heartbeatInterval: "500 millis", heartbeatTimeout: "2 seconds" })
        const session = yield* agent.session({
          ...options,
          includePartialMessages: true,
          messageBufferBytes: 256 * 1024
        })
        yield* session.send("Please flood")
        const pull = yield* Stream.toPull(session.receiveResponse)
        const first = yield* pull
        // The slow part of this consumer: it reads nothing for three heartbeat timeouts while the
        // reply streams (the model sends it all at once).
        yield* model.waitForRequests(1)
        yield* Effect.sleep("6 seconds")
        const rest = yield* Stream.runCollect(Stream.fromPull(Effect.succeed(pull)))
        const messages = [...Chunk.toReadonlyArray(first), ...Chunk.toReadonlyArray(rest)]
        expect(messages.map(deltaText).join("")).toBe(text)
        const result = messages.find(Message.isResult)
        expect(result !== undefined && "result" in result ? result.result : result?.type).toBe(text)
        // The connection survived the wait: the next turn runs on it.
        yield* session.send("And again")
        const next = yield* session.receiveResponse.pipe(
          Stream.runCollect,
          Effect.map(Chunk.findLast(Message.isResult))
        )
        expect(Option.map(next, (r) => ("result" in r ? r.result : r.type))).toEqual(Option.some("still here"))
      }).pipe(Effect.provide(NodeContext.layer)),
    120_000
  )
})
