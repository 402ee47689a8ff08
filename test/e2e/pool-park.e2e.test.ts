// The pool's parked spares on the real `claude` CLI against ScriptedModel: spares parked in a
// neutral folder serve requests for two project folders with two models, and a claim the CLI
// refuses falls back to a cold start that answers the prompt.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Layer, Schedule, Stream } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as AgentPool from "../../src/AgentPool.js"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as Message from "../../src/schema/Message.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"
import { expectEachInItsFolder } from "../support/claimedFolders.js"
import { claudePids } from "../support/processes.js"

const AgentLive = ClaudeAgent.layer.pipe(Layer.provide(NodeContext.layer))

const warmSpares = (pool: AgentPool.AgentPoolShape, n: number) =>
  Effect.repeat(pool.stats, { until: (s) => s.warm === n, schedule: Schedule.spaced("20 millis") })

describe("e2e: AgentPool with parked spares (real claude CLI)", () => {
  it.scopedLive("parked spares serve two folders with two models; a refused claim falls back to a cold start", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([{ reply: ScriptedModel.text("done"), times: Infinity }])
      const base = yield* model.options()
      const root = path.dirname(base.cwd)
      const folders = {
        park: path.join(root, "spares"),
        a: path.join(root, "project-alpha"),
        b: path.join(root, "project-beta"),
        fixed: path.join(root, "project-fixed-model")
      }
      for (const dir of Object.values(folders)) fs.mkdirSync(dir, { recursive: true })
      // A folder whose project settings set the model: a parked process cannot take it.
      fs.mkdirSync(path.join(folders.fixed, ".claude"))
      fs.writeFileSync(
        path.join(folders.fixed, ".claude", "settings.json"),
        JSON.stringify({ model: "claude-haiku-4-5" })
      )
      // Claude Code's own prompt: its environment section names the working directory.
      const { cwd: _, ...host } = {
        ...base,
        systemPrompt: { type: "preset", preset: "claude_code" },
        settingSources: ["project"]
      } as const
      const agent = yield* ClaudeAgent.ClaudeAgent
      const pool = yield* AgentPool.make(agent, {
        maxConcurrent: 3,
        warm: 2,
        park: true,
        warmOptions: { ...host, cwd: folders.park }
      })
      const events: Array<AgentPool.PoolEvent> = []
      yield* Effect.forkScoped(Stream.runForEach(pool.events, (e) => Effect.sync(() => void events.push(e))))
      yield* warmSpares(pool, 2)

      const ask = (prompt: string, cwd: string, modelName?: string) =>
        pool.query(prompt, { ...host, cwd, ...(modelName === undefined ? {} : { model: modelName }) }).pipe(
          Stream.runCollect,
          Effect.map(Chunk.toArray)
        )
      const [alpha, beta] = yield* Effect.all([
        ask("question alpha", folders.a, "claude-haiku-4-5"),
        ask("question beta", folders.b, "claude-sonnet-4-5")
      ], { concurrency: 2 })
      for (const [messages, folder] of [[alpha, folders.a], [beta, folders.b]] as const) {
        expect(messages.find(Message.isSystemInit)?.cwd).toBe(folder)
        expect(messages.filter(Message.isResult).map((r) => r.is_error)).toEqual([false])
      }
      expectEachInItsFolder(yield* model.mainRequests, folders)
      expect(
        events.filter((e) => e._tag === "ClaimedWarm").map((e) => e._tag === "ClaimedWarm" ? e.cwd : undefined).sort()
      )
        .toEqual([folders.a, folders.b].sort())

      // Refused (project settings a claim cannot apply): answered by a cold start all the same.
      yield* warmSpares(pool, 2)
      const fixed = yield* ask("question fixed", folders.fixed)
      expect(fixed.find(Message.isSystemInit)?.cwd).toBe(folders.fixed)
      expect(fixed.filter(Message.isResult).map((r) => r.is_error)).toEqual([false])
      expect(events.find((e) => e._tag === "ClaimFellBack")).toMatchObject({
        reason: "not_claimed",
        code: "project_settings_not_claimable"
      })
      const stats = yield* pool.stats
      expect([stats.claimed, stats.claimsFellBack]).toEqual([2, 1])
      const later = yield* model.mainRequests
      expect(later.filter((r) => ScriptedModel.lastUserText(r).includes("question fixed"))).toHaveLength(1)
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("closing the pool stops its parked spares", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([{ reply: ScriptedModel.text("done"), times: Infinity }])
      const base = yield* model.options()
      const parking = path.join(path.dirname(base.cwd), "spares")
      fs.mkdirSync(parking, { recursive: true })
      const agent = yield* ClaudeAgent.ClaudeAgent
      yield* Effect.scoped(Effect.gen(function*() {
        const pool = yield* AgentPool.make(agent, { warm: 2, park: true, warmOptions: { ...base, cwd: parking } })
        yield* warmSpares(pool, 2)
        expect(claudePids(base.env.HOME).length).toBe(2)
      }))
      expect(claudePids(base.env.HOME)).toEqual([])
    }).pipe(Effect.provide(AgentLive)))
})
