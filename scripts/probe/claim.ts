// Probe: what CLI 2.1.330 does with `--await-claim` and `claim_session`, against ScriptedModel.
// Prints every frame both ways, then what the model was asked (docs/protocol-claim.md has the
// findings).
//
//   npx tsx scripts/probe/claim.ts <scenario> [extra CLI args]
//
// Scenarios: ok, full (every claim field), missing (cwd), env (a start-up variable), envok,
// bypass / plan / bogusmode (permission modes), twice, userfirst (a prompt before the claim),
// nopark (no --await-claim), model, badmodel, settings (SETTINGS='{"…"}' sent before the claim),
// badsettings (hook keys), projsettings (the folder's settings set `model`; with
// SOURCES=project,local). PRESET=1: Claude Code's system prompt; SHOWSYS=1 prints it; FULL=1 does
// not shorten frames; HOLD=ms keeps stdin open that long after a refusal.
import { NodeContext } from "@effect/platform-node"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import * as readline from "node:readline"
import { ScriptedModel } from "../../src/testing/index.js"

const scenario = process.argv[2] ?? "ok"
const extra = process.argv.slice(3)

const program = Effect.scoped(Effect.gen(function*() {
  const model = yield* ScriptedModel.make([{ reply: ScriptedModel.text("hi there"), times: Infinity }])
  const base = yield* model.options()
  const park = path.join(base.cwd, "..", "park")
  const projA = path.join(base.cwd, "..", "projA")
  fs.mkdirSync(park, { recursive: true })
  fs.mkdirSync(projA, { recursive: true })
  fs.writeFileSync(path.join(projA, "CLAUDE.md"), "PROJECT A MEMORY MARKER\n")
  if (scenario === "projsettings") {
    fs.mkdirSync(path.join(projA, ".claude"), { recursive: true })
    fs.writeFileSync(path.join(projA, ".claude", "settings.json"), JSON.stringify({ model: "claude-haiku-4-5" }))
  }
  yield* Effect.promise(() =>
    new Promise<void>((resolve) => {
      const args = [
        "--output-format",
        "stream-json",
        "--verbose",
        "--input-format",
        "stream-json",
        ...(process.env.SOURCES ? [`--setting-sources=${process.env.SOURCES}`] : ["--setting-sources="]),
        ...(scenario === "nopark" ? [] : ["--await-claim"]),
        ...extra
      ]
      const child = spawn(path.resolve("node_modules/.bin/claude"), args, {
        cwd: park,
        env: {
          ...process.env,
          ...base.env,
          CLAUDE_CODE_ENTRYPOINT: "sdk-ts",
          CLAUDE_CODE_SDK_READS_SESSION_STATE: "1"
        },
        stdio: ["pipe", "pipe", "pipe"]
      })
      const t0 = Date.now()
      const log = (dir: string, o: unknown) => {
        const s = JSON.stringify(o)
        process.stdout.write(
          `${String(Date.now() - t0).padStart(6)} ${dir} ${
            s.length > (process.env.FULL ? 99999 : 700) ? s.slice(0, 700) + "…" : s
          }\n`
        )
      }
      const send = (o: unknown) => {
        log(">>", o)
        child.stdin.write(JSON.stringify(o) + "\n")
      }
      child.stderr.on("data", (d) => process.stdout.write(`STDERR ${d}`))
      const rl = readline.createInterface({ input: child.stdout })
      let n = 0
      type Reply = { readonly subtype?: string }
      const waiting = new Map<string, (r: Reply) => void>()
      const req = (request: object) =>
        new Promise<Reply>((res) => {
          const id = `req_${++n}`
          waiting.set(id, res)
          send({ type: "control_request", request_id: id, request })
        })
      const user = (text: string) =>
        send({ type: "user", message: { role: "user", content: text }, parent_tool_use_id: null, session_id: "" })
      rl.on("line", (line) => {
        const o = JSON.parse(line)
        log("<<", o)
        if (o.type === "control_response") waiting.get(o.response.request_id)?.(o.response)
        if (o.type === "result") setTimeout(() => child.stdin.end(), 200)
      })
      child.on("exit", (code, sig) => {
        log("EXIT", { code, sig })
        resolve()
      })
      void (async () => {
        await req({ subtype: "initialize", ...(process.env.PRESET ? {} : { systemPrompt: [""] }), hooks: {} })
        const claim: Record<string, unknown> = {
          subtype: "claim_session",
          cwd: projA,
          include_initialize: true,
          sdk_mcp_servers: []
        }
        if (scenario === "missing") claim.cwd = path.join(projA, "nope")
        if (scenario === "env") claim.env = { FOO: "1" }
        if (scenario === "envok") claim.env = { CLAUDE_CODE_HOST_SESSION_ID: "host-1" }
        if (scenario === "bypass") claim.permission_mode = "bypassPermissions"
        if (scenario === "plan") claim.permission_mode = "plan"
        if (scenario === "bogusmode") claim.permission_mode = "banana"
        if (scenario === "full") {
          Object.assign(claim, {
            additional_directories: [park],
            append_system_prompt: "APPENDED MARKER",
            title: "T1",
            agents: { rev: { description: "Reviews", prompt: "REV" } }
          })
        }
        if (scenario === "userfirst") {
          user("before claim")
          await new Promise((r) => setTimeout(r, 1500))
        }
        if (scenario === "settings") {
          await req({
            subtype: "apply_flag_settings",
            settings: process.env.SETTINGS ? JSON.parse(process.env.SETTINGS) : { effortLevel: "high" }
          })
        }
        if (scenario === "badsettings") await req({ subtype: "apply_flag_settings", settings: { hooks: { Stop: [] } } })
        const r = await req(claim)
        if (scenario === "twice") await req({ ...claim })
        if (scenario === "model") await req({ subtype: "set_model", model: "claude-haiku-4-5" })
        if (scenario === "badmodel") await req({ subtype: "set_model", model: "not-a-model-xyz" })
        if (r.subtype === "success") user("hello")
        else setTimeout(() => child.stdin.end(), Number(process.env.HOLD ?? 1500))
      })()
    })
  )
  const reqs = yield* model.mainRequests
  for (const r of reqs) {
    process.stdout.write(
      `MODEL ${r.model} system has projA: ${r.system.includes("projA")} park: ${
        r.system.includes("/park")
      } msgs projA: ${JSON.stringify(r.messages).includes("projA")} marker: ${
        JSON.stringify(r.messages).includes("MEMORY MARKER")
      } appended: ${r.system.includes("APPENDED")} thinking: ${
        JSON.stringify(Reflect.get(Object(r.body), "thinking"))
      }\n`
    )
    if (process.env.SHOWSYS) process.stdout.write(`SYSTEM ${r.system}\n`)
  }
}))

Effect.runPromise(program.pipe(Effect.provide(NodeContext.layer)))
