// The cluster entity on the real CLI, durable on one machine: a runner process (SingleRunner on a
// SQLite file) is killed with SIGKILL in the middle of a turn; a second process on the same file
// takes the turn over, resumes the conversation, and the model sees the earlier turns. The
// scripted model runs here, so it outlives both runners and records what each CLI asked it.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Predicate, Schedule } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"
import { claudePids } from "../support/processes.js"

const root = fileURLToPath(new URL("../../", import.meta.url))
const runnerScript = fileURLToPath(new URL("../support/clusterRunner.ts", import.meta.url))
const guardScript = fileURLToPath(new URL("../support/guardChild.ts", import.meta.url))

interface Line {
  readonly turnId?: string
  readonly message?: { readonly type: string; readonly result?: string; readonly subtype?: string }
  readonly done?: boolean
}

// A runner process; `lines` collects what it prints, `exited` completes when it has exited.
const startRunner = (
  port: number,
  env: Record<string, string>,
  turns: ReadonlyArray<readonly [string, string, string]>
) =>
  Effect.gen(function*() {
    const lines: Array<Line> = []
    const seen = yield* Deferred.make<void>()
    const exited = yield* Deferred.make<number | null>()
    let wanted: ((line: Line) => boolean) | undefined
    const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", runnerScript], {
      cwd: root,
      env: { ...process.env, ...env, RUNNER_PORT: String(port), TURNS: JSON.stringify(turns) },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let buffer = ""
    let stderr = ""
    child.stdout?.on("data", (chunk: Buffer) => {
      buffer += chunk.toString("utf8")
      let i: number
      while ((i = buffer.indexOf("\n")) >= 0) {
        const text = buffer.slice(0, i)
        buffer = buffer.slice(i + 1)
        if (!text.startsWith("{")) {
          stderr += `${text}\n`
          continue
        }
        const line: Line = JSON.parse(text)
        lines.push(line)
        if (wanted?.(line) === true) Deferred.unsafeDone(seen, Effect.void)
      }
    })
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8")
    })
    child.on("exit", (code) => Deferred.unsafeDone(exited, Effect.succeed(code)))
    yield* Effect.addFinalizer(() => Effect.sync(() => child.exitCode === null && child.kill("SIGKILL")))
    const waitFor = (predicate: (line: Line) => boolean) =>
      Effect.suspend(() => {
        if (lines.some(predicate)) return Effect.void
        wanted = predicate
        return Deferred.await(seen)
      })
    return { child, lines, exited: Deferred.await(exited), waitFor, stderr: () => stderr }
  })

// The CLI adds reminders of its own to a prompt's message.
const asked = (r: ScriptedModel.RecordedRequest, prompt: string) => ScriptedModel.lastUserText(r).includes(prompt)

const userTexts = (request: ScriptedModel.RecordedRequest): Array<string> =>
  request.messages.filter(Predicate.isRecord).filter((m) => m.role === "user").map((m) =>
    typeof m.content === "string"
      ? m.content
      : Array.isArray(m.content)
      ? m.content.map((b: unknown) => (Predicate.isRecord(b) && typeof b.text === "string" ? b.text : "")).join("")
      : ""
  )

// The prompts among the user messages of a request, in order.
const prompts = (r: ScriptedModel.RecordedRequest): Array<string> =>
  userTexts(r).flatMap((text) =>
    ["first question", "second question", "third question"].filter((p) => text.includes(p))
  )

const assistantTexts = (request: ScriptedModel.RecordedRequest): Array<string> =>
  request.messages.filter(Predicate.isRecord).filter((m) => m.role === "assistant").flatMap((m) =>
    Array.isArray(m.content)
      ? m.content.flatMap((b: unknown) => (Predicate.isRecord(b) && typeof b.text === "string" ? [b.text] : []))
      : []
  )

// Whether a process runs (a killed orphan may linger as a zombie until init reaps it).
const running = (pid: number): boolean => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3)
    return state !== "Z" && state !== "X"
  } catch {
    return false
  }
}

// The CLI processes of this test's HOME, polled until none is left (they are another process's
// children: there is nothing to wait on but their absence).
const noCliLeft = (home: string | undefined, known: ReadonlyArray<number> = []) =>
  Effect.suspend(() => claudePids(home).length === 0 && !known.some(running) ? Effect.void : Effect.fail("alive")).pipe(
    Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.upTo(Duration.seconds(5)))),
    Effect.orElse(() =>
      Effect.sync(() =>
        expect({ cli: claudePids(home), running: known.filter(running) }).toEqual({ cli: [], running: [] })
      )
    )
  )

describe("e2e: AgentEntity on SingleRunner + SQLite", () => {
  it.scopedLive(
    "a runner killed mid-turn: the next process re-runs the turn with resume, earlier turns intact",
    () =>
      Effect.gen(function*() {
        const model = yield* ScriptedModel.make([
          { match: (r) => asked(r, "first question"), reply: ScriptedModel.text("answer one") },
          // The first attempt at turn two would stream for 30 s: its runner is killed meanwhile.
          {
            match: (r) => asked(r, "second question"),
            reply: ScriptedModel.slowText("never finished ".repeat(120), { chunkSize: 3, delayMs: 50 })
          },
          { match: (r) => asked(r, "second question"), reply: ScriptedModel.text("answer two") },
          { match: (r) => asked(r, "third question"), reply: ScriptedModel.text("answer three") }
        ])
        const options = yield* model.options()
        const home = options.env.HOME
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cluster-e2e-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
        const env = { DB: path.join(dir, "cluster.db"), OPTS: JSON.stringify(options) }

        // First process: turn one completes, turn two is killed while the model streams.
        const first = yield* startRunner(34431, env, [["chat", "t1", "first question"], [
          "chat",
          "t2",
          "second question"
        ]])
        yield* first.waitFor((l) => l.turnId === "t1" && l.message?.type === "result")
        yield* model.waitForRequests(1, (r) => asked(r, "second question"))
        const [cli] = claudePids(home)
        expect(cli).toBeDefined()
        first.child.kill("SIGKILL")
        expect(yield* first.exited).toBe(null)
        // Its CLI was orphaned in the middle of a turn, which it would finish (25 s more of reply)
        // before it exits on the end of its input: the guard kills it within the 5 s allowed.
        yield* noCliLeft(home, cli === undefined ? [] : [cli])
        expect(first.lines.filter((l) => l.turnId === "t2" && l.message?.type === "result")).toEqual([])

        // Second process, same database: it asks for turn two again (same turn id: the same
        // request), gets the re-run's reply, then a third turn.
        const second = yield* startRunner(34432, env, [["chat", "t2", "second question"], [
          "chat",
          "t3",
          "third question"
        ]])
        expect(yield* second.exited, second.stderr()).toBe(0)
        const results = second.lines.filter((l) => l.message?.type === "result").map((
          l
        ) => [l.turnId, l.message?.result])
        expect(results).toEqual([["t2", "answer two"], ["t3", "answer three"]])

        const twos = yield* model.waitForRequests(2, (r) => asked(r, "second question"))
        const rerun = twos[1]
        expect(rerun).toBeDefined()
        if (rerun !== undefined) {
          // The re-run resumed the conversation: turn one is there, the killed attempt is not.
          expect(prompts(rerun)).toEqual(["first question", "second question"])
          expect(assistantTexts(rerun)).toEqual(["answer one"])
        }
        const [three] = yield* model.waitForRequests(1, (r) => asked(r, "third question"))
        expect(three === undefined ? [] : prompts(three)).toEqual([
          "first question",
          "second question",
          "third question"
        ])
        expect(three === undefined ? [] : assistantTexts(three)).toEqual(["answer one", "answer two"])
        yield* noCliLeft(home)
      }).pipe(Effect.provide(NodeContext.layer)),
    { timeout: 60_000 }
  )

  it.scopedLive("OrphanGuard: a process group registered by a process killed with SIGKILL is killed too", () =>
    Effect.gen(function*() {
      const child = spawn(process.execPath, ["--import", "tsx", guardScript], {
        cwd: root,
        stdio: ["ignore", "pipe", "inherit"]
      })
      yield* Effect.addFinalizer(() => Effect.sync(() => child.exitCode === null && child.kill("SIGKILL")))
      const pid = yield* Effect.async<number>((resume) => {
        child.stdout?.once("data", (chunk: Buffer) => resume(Effect.succeed(Number(chunk.toString("utf8").trim()))))
      })
      // Whatever happens below, the sleeper does not outlive the test.
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          if (running(pid)) process.kill(-pid, "SIGKILL")
        })
      )
      expect(running(pid)).toBe(true)
      child.kill("SIGKILL")
      yield* Effect.suspend(() => (running(pid) ? Effect.fail("alive") : Effect.void)).pipe(
        Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.upTo(Duration.seconds(5)))),
        Effect.orElse(() => Effect.sync(() => expect(running(pid)).toBe(false)))
      )
    }))
})
