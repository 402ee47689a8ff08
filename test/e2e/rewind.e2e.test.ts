// Rewinding files on the real `claude` binary against ScriptedModel: the uuid `send` returns is the
// id the CLI rewinds to, and "cannot rewind" is data whether or not it is a dry run.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Stream } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"

const AgentLive = ClaudeAgent.layer.pipe(Layer.provide(NodeContext.layer))

const writesAFile = ScriptedModel.make([
  {
    match: (r) => ScriptedModel.toolResultCount(r) === 0,
    reply: ScriptedModel.toolUse("Write", { file_path: "rewind.txt", content: "v1" })
  },
  { match: (r) => ScriptedModel.toolResultCount(r) === 1, reply: ScriptedModel.text("written") }
])

describe("e2e: rewindFiles with the uuid send returns", () => {
  it.scopedLive("with checkpointing: the dry run lists the file, the rewind removes it", () =>
    Effect.gen(function*() {
      const model = yield* writesAFile
      const options = yield* model.options()
      const session = yield* ClaudeAgent.session({
        ...options,
        permissionMode: "acceptEdits",
        enableFileCheckpointing: true
      })
      const uuid = yield* session.send("write rewind.txt")
      yield* session.receiveResponse.pipe(Stream.runDrain)
      const file = path.join(options.cwd ?? ".", "rewind.txt")
      expect(fs.existsSync(file)).toBe(true)
      const dry = yield* session.rewindFiles(uuid, { dryRun: true })
      expect(dry.canRewind).toBe(true)
      expect(dry.filesChanged?.map((f) => path.basename(f))).toEqual(["rewind.txt"])
      expect(fs.existsSync(file)).toBe(true)
      const done = yield* session.rewindFiles(uuid)
      expect(done.canRewind).toBe(true)
      expect(fs.existsSync(file)).toBe(false)
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("without checkpointing: cannot rewind is data, not a failure, and nothing is restored", () =>
    Effect.gen(function*() {
      const model = yield* writesAFile
      const options = yield* model.options()
      const session = yield* ClaudeAgent.session({ ...options, permissionMode: "acceptEdits" })
      const uuid = yield* session.send("write rewind.txt")
      yield* session.receiveResponse.pipe(Stream.runDrain)
      const refused = yield* session.rewindFiles(uuid)
      expect(refused.canRewind).toBe(false)
      expect(refused.error).toBeDefined()
      expect(fs.existsSync(path.join(options.cwd ?? ".", "rewind.txt"))).toBe(true)
    }).pipe(Effect.provide(AgentLive)))
})
