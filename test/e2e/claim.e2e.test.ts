// Parked spares on the real `claude` CLI against ScriptedModel: spares parked in a neutral
// directory are claimed for two project folders with two models, and each session's requests to
// the model carry its own folder and model; claims the CLI must refuse are typed refusals.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Exit, Layer, Scope, Stream } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as Message from "../../src/schema/Message.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"
import { expectEachInItsFolder } from "../support/claimedFolders.js"
import { claudePids } from "../support/processes.js"

const AgentLive = ClaudeAgent.layer.pipe(Layer.provide(NodeContext.layer))

const setUp = Effect.gen(function*() {
  const model = yield* ScriptedModel.make([{ reply: ScriptedModel.text("done"), times: Infinity }])
  const base = yield* model.options()
  const root = path.dirname(base.cwd)
  const folders = {
    park: path.join(root, "spares"),
    a: path.join(root, "project-alpha"),
    b: path.join(root, "project-beta")
  }
  for (const dir of Object.values(folders)) fs.mkdirSync(dir, { recursive: true })
  // Claude Code's own prompt: its environment section names the working directory.
  const host = { ...base, cwd: folders.park, systemPrompt: { type: "preset", preset: "claude_code" } } as const
  return { model, host, folders }
})

describe("e2e: parked spares on the real claude CLI", () => {
  it.scopedLive("two spares parked in a neutral folder, claimed for two projects with two models", () =>
    Effect.gen(function*() {
      const { folders, host, model } = yield* setUp
      const [first, second] = yield* Effect.all([ClaudeAgent.park(host), ClaudeAgent.park(host)], { concurrency: 2 })
      const alpha = yield* first.claim("question alpha", { cwd: folders.a, model: "claude-haiku-4-5" })
      const beta = yield* second.claim("question beta", { cwd: folders.b, model: "claude-sonnet-4-5", title: "Beta" })
      expect(alpha.cwd).toBe(folders.a)
      expect(beta.cwd).toBe(folders.b)
      expect(alpha.sessionId).not.toBe(beta.sessionId)
      for (const claimed of [alpha, beta]) {
        const messages = Chunk.toArray(yield* claimed.session.receiveResponse.pipe(Stream.runCollect))
        const init = messages.find(Message.isSystemInit)
        expect(init?.cwd).toBe(claimed.cwd)
        expect(messages.filter(Message.isResult).map((r) => r.is_error)).toEqual([false])
      }
      expectEachInItsFolder(yield* model.mainRequests, folders)
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("claims the CLI must refuse are ClaimRefused, and the prompt never reaches the model", () =>
    Effect.gen(function*() {
      const { folders, host, model } = yield* setUp
      const [one, two] = yield* Effect.all([ClaudeAgent.park(host), ClaudeAgent.park(host)], { concurrency: 2 })
      const bypass = yield* Effect.flip(
        one.claim("never bypass", { cwd: folders.a, permissionMode: "bypassPermissions" })
      )
      expect(bypass._tag === "ClaimRefused" ? [bypass.reason, bypass.code] : bypass._tag).toEqual([
        "permission_mode_not_claimable",
        "permission_mode_not_claimable"
      ])
      const missing = yield* Effect.flip(two.claim("never missing", { cwd: path.join(folders.a, "nope") }))
      expect(missing._tag === "ClaimRefused" ? [missing.reason, missing.code] : missing._tag).toEqual([
        "not_claimed",
        "cwd_not_found"
      ])
      // A folder whose project settings set what only a start-up can apply.
      fs.mkdirSync(path.join(folders.b, ".claude"))
      fs.writeFileSync(path.join(folders.b, ".claude", "settings.json"), JSON.stringify({ model: "claude-haiku-4-5" }))
      const reading = yield* ClaudeAgent.park({ ...host, settingSources: ["project"] })
      const settings = yield* Effect.flip(reading.claim("never settings", { cwd: folders.b }))
      expect(settings._tag === "ClaimRefused" ? [settings.reason, settings.code] : settings._tag).toEqual([
        "not_claimed",
        "project_settings_not_claimable"
      ])
      // An overlay the CLI refuses: a folder-level key (before the claim) and a session key (after it).
      for (const settings of [{ enabledPlugins: "all" }, { fastMode: "yes" }]) {
        const spare = yield* ClaudeAgent.park(host)
        const refused = yield* Effect.flip(spare.claim("never overlay", { cwd: folders.a, settings }))
        expect(refused._tag === "ClaimRefused" ? refused.reason : refused._tag).toBe("settings_not_applied")
      }
      const again = yield* Effect.flip(one.claim("never again", { cwd: folders.a }))
      expect(again._tag === "ClaimRefused" ? again.code : again._tag).toBe("already_claimed")
      const requests = yield* model.mainRequests
      expect(requests.filter((r) => ScriptedModel.lastUserText(r).includes("never"))).toEqual([])
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("closing the scope stops every spare, claimed, refused or parked, and removes the parking directory it made", () =>
    Effect.gen(function*() {
      const { folders, host } = yield* setUp
      const home = host.env.HOME
      const scope = yield* Scope.make()
      const { cwd: _, ...withoutCwd } = host
      const [claimed, refused, parked] = yield* Effect.all([
        ClaudeAgent.park(host),
        ClaudeAgent.park(host),
        // No `cwd`: a fresh temporary directory, made through the FileSystem.
        ClaudeAgent.park(withoutCwd).pipe(Effect.provide(NodeContext.layer))
      ], { concurrency: 3 }).pipe(Scope.extend(scope))
      const session = yield* claimed.claim("work", { cwd: folders.a })
      yield* session.session.receiveResponse.pipe(Stream.runDrain)
      yield* Effect.flip(refused.claim("never", { cwd: path.join(folders.a, "nope") }))
      const parkingDirectory = parked.parkingDirectory
      expect(path.basename(parkingDirectory)).toMatch(/^claude-spare-/)
      expect(fs.existsSync(parkingDirectory)).toBe(true)
      expect(claudePids(home).length).toBeGreaterThanOrEqual(2)
      yield* Scope.close(scope, Exit.void)
      expect(claudePids(home)).toEqual([])
      expect(fs.existsSync(parkingDirectory)).toBe(false)
    }).pipe(Effect.provide(AgentLive)))
})
