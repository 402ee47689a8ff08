// The program `test/fixtures/recording-session.jsonl` was recorded with: two turns with
// `setModel` and `mcpServerStatus` between them. The e2e test records it (and re-records the
// fixture with UPDATE_RECORDING_FIXTURE=1); the unit test replays it.
import { Chunk, Effect, Stream } from "effect"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import type * as Options from "../../src/schema/Options.js"

export const program = (options: Options.Options = {}) =>
  Effect.scoped(Effect.gen(function*() {
    const session = yield* ClaudeAgent.session(options)
    yield* session.send("turn one")
    const one = yield* session.receiveResponse.pipe(Stream.runCollect)
    const model = yield* session.setModel("claude-haiku-4-5")
    const status = yield* session.mcpServerStatus()
    yield* session.send("turn two")
    const two = yield* session.receiveResponse.pipe(Stream.runCollect)
    return { messages: [...Chunk.toArray(one), ...Chunk.toArray(two)], model, status, pid: session.pid }
  }))
