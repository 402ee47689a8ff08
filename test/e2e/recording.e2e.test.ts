// End-to-end: record a real `claude` session (against ScriptedModel), then replay the file.
// `UPDATE_RECORDING_FIXTURE=1` also refreshes test/fixtures/recording-session.jsonl from it.
import { NodeContext } from "@effect/platform-node"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as Message from "../../src/schema/Message.js"
import * as Recording from "../../src/testing/Recording.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"
import { claudePids } from "../support/processes.js"
import { program } from "../support/recordingProgram.js"

const summary = (messages: ReadonlyArray<Message.Message>) =>
  messages.map((m) => ({
    type: m.type,
    subtype: "subtype" in m ? m.subtype : undefined,
    text: Message.isAssistant(m)
      ? Message.assistantText(m)
      : Message.isResult(m) && "result" in m
      ? m.result
      : undefined
  }))

describe("e2e: record a real session, replay it", () => {
  it.scopedLive("the replay delivers the same messages and control replies as the live session", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([
        { reply: ScriptedModel.text("first answer") },
        { reply: ScriptedModel.text("second answer") },
        { reply: ScriptedModel.text("third answer") }
      ])
      const options = yield* model.options()
      const home = options.env.HOME ?? ""
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "recording-e2e-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
      const file = path.join(dir, "session.jsonl")

      // Two sessions through one layer: the second goes to `session-2.jsonl`.
      const third = ClaudeAgent.query("turn three", options).pipe(ClaudeAgent.lastResult)
      const { live, liveThird } = yield* Effect.all({ live: program(options), liveThird: third }).pipe(
        Effect.provide(Recording.layerRecord(file).pipe(Layer.provide(NodeContext.layer)))
      )
      expect(Option.isSome(live.pid)).toBe(true)
      expect(claudePids(home)).toEqual([])
      // The model saw the CLI's own headers.
      const [first] = yield* model.mainRequests
      expect(first?.headers["user-agent"]).toMatch(/^claude-cli\//)
      expect(first?.headers["x-api-key"]).toBe("sk-ant-test-dummy")
      expect(first?.headers["anthropic-beta"]?.length).toBeGreaterThan(0)

      const entries = yield* Recording.load(file).pipe(Effect.provide(NodeContext.layer))
      expect(entries[0]?.dir).toBe("in")
      expect(entries.some((e) => e.dir === "end-input")).toBe(true)
      expect(entries.at(-1)?.dir).toBe("exit")

      const replayed = yield* program(options).pipe(
        Effect.provide(Recording.layerReplayFile(file).pipe(Layer.provide(NodeContext.layer)))
      )
      expect(summary(replayed.messages)).toEqual(summary(live.messages))
      expect(summary(live.messages).filter((m) => m.type === "result").map((m) => m.text)).toEqual([
        "first answer",
        "second answer"
      ])
      expect(replayed.model).toEqual(live.model)
      expect(replayed.status).toEqual(live.status)
      expect(Option.isNone(replayed.pid)).toBe(true)

      const second = Recording.layerReplayFile(path.join(dir, "session-2.jsonl"))
      const replayedThird = yield* third.pipe(Effect.provide(second.pipe(Layer.provide(NodeContext.layer))))
      expect("result" in replayedThird ? replayedThird.result : undefined).toBe("third answer")
      expect(replayedThird.session_id).toBe(liveThird.session_id)
      expect(claudePids(home)).toEqual([])

      if (process.env.UPDATE_RECORDING_FIXTURE === "1") {
        // The temporary HOME/cwd and the model's port vary per run; placeholders keep diffs small.
        const text = fs.readFileSync(file, "utf8")
          .split(path.dirname(home)).join("<tmp>")
          .split(model.url).join("<model-url>")
        fs.writeFileSync(new URL("../fixtures/recording-session.jsonl", import.meta.url), text)
      }
    }))
})
