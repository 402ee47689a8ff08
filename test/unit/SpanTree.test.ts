// SpanTree: the span tree printer for development, on spans the SDK makes over the fake CLI, and
// its entry's import graph (it must not load the testing kit).
import { describe, expect, it } from "@effect/vitest"
import { type Console, Effect, Schema, Stream } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as SpanTree from "../../src/SpanTree.js"
import * as McpServer from "../../src/McpServer.js"
import * as FakeCli from "../../src/testing/FakeCli.js"
import * as Tool from "../../src/Tool.js"

const stopInput = { hook_event_name: "Stop", session_id: "s", transcript_path: "/t", cwd: "/", stop_hook_active: false }

// One turn in which the CLI calls a Stop hook.
const withHook = FakeCli.layerClaudeAgent({
  onUserMessage: (message, cli) =>
    cli.requestRaw({ subtype: "hook_callback", callback_id: "hook_0", input: stopInput }, "req-hook").pipe(
      Effect.zipRight(FakeCli.echoTurn(message, cli))
    )
})
const run = ClaudeAgent.query("hello", {
  model: "claude-fake-1",
  hooks: { Stop: [{ hooks: [() => Effect.succeed({})] }] }
})
  .pipe(Stream.runDrain)

// Effect's Console with `log` kept in `lines`.
const capturedConsole = Effect.map(Effect.console, (base) => {
  const lines: Array<string> = []
  const console: Console.Console = { ...base, log: (...args) => Effect.sync(() => void lines.push(args.join(" "))) }
  return { lines, console }
})

const durations = (text: string) => text.replace(/ {2}[\d.]+ ms/g, "  <t>")

describe("SpanTree.print", () => {
  it.effect("writes session → turn → hook with the model, the turn's outcome, tokens and cost, when the run ends", () =>
    Effect.gen(function*() {
      const { lines, console } = yield* capturedConsole
      yield* run.pipe(SpanTree.print(), Effect.provide(withHook), Effect.withConsole(console))
      expect(lines).toHaveLength(1)
      const text = durations(lines[0] ?? "")
      const at = (name: string) => text.split("\n").findIndex((line) => line.includes(name))
      expect(text.split("\n")[at("ClaudeAgent.session")]).toBe("ClaudeAgent.session  <t>  claude-fake-1")
      expect(text).toContain("└─ invoke_agent claude-code  <t>  success  10 in / 5 out tokens  $0.0010")
      expect(text).toMatch(/ {3}[├└]─ ControlChannel\.hook_callback {2}<t> {2}Stop\n/)
      expect(at("ClaudeAgent.session")).toBeLessThan(at("invoke_agent claude-code"))
      expect(at("invoke_agent claude-code")).toBeLessThan(at("ControlChannel.hook_callback"))
    }))

  it.effect("writes an in-process tool's call as one line, the tool's, with its server and method", () =>
    Effect.gen(function*() {
      const { lines, console } = yield* capturedConsole
      const add = Tool.make("add", {
        description: "Adds",
        parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
        handler: ({ a, b }) => Effect.succeed(`${a + b}`)
      })
      const withTool = FakeCli.layerClaudeAgent({
        onUserMessage: (message, cli) =>
          cli.requestRaw({
            subtype: "mcp_message",
            server_name: "calc",
            message: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "add", arguments: { a: 2, b: 3 } } }
          }, "req-tool").pipe(Effect.zipRight(FakeCli.echoTurn(message, cli)))
      })
      yield* ClaudeAgent.query("hello", {
        model: "claude-fake-1",
        mcpServers: { calc: McpServer.make({ name: "calc", tools: [add] }) }
      }).pipe(Stream.runDrain, SpanTree.print(), Effect.provide(withTool), Effect.withConsole(console))
      const text = durations(lines.join("\n"))
      expect(text).toMatch(/\n {3}[├└]─ Tool\.add {2}<t> {2}calc {2}tools\/call\n/)
      expect(text).not.toContain("ControlChannel.mcp_message")
    }))

  it.effect("writes the tree of a run that fails too, marking the failed span", () =>
    Effect.gen(function*() {
      const { lines, console } = yield* capturedConsole
      const failing = Effect.fail("boom").pipe(Effect.withSpan("work"), Effect.withSpan("outer"))
      expect(yield* Effect.flip(SpanTree.print(failing).pipe(Effect.withConsole(console)))).toBe("boom")
      expect(durations(lines.join("\n"))).toBe("outer  <t>  failed\n└─ work  <t>  failed")
    }))

  it.effect("marks an interrupted span as such, and writes nothing when no span was made", () =>
    Effect.gen(function*() {
      const { lines, console } = yield* capturedConsole
      const stopped = Effect.interrupt.pipe(Effect.withSpan("stopped"))
      yield* Effect.exit(SpanTree.print(stopped).pipe(Effect.withConsole(console)))
      expect(durations(lines.join("\n"))).toBe("stopped  <t>  interrupted")
      yield* SpanTree.print(Effect.void).pipe(Effect.withConsole(console))
      expect(lines).toHaveLength(1)
    }))
})

describe("SpanTree.fromSpans and format", () => {
  it.effect("a left-out span passes its children to its nearest kept ancestor; unfinished spans say running", () =>
    Effect.gen(function*() {
      const recorder = yield* SpanTree.record
      yield* Effect.gen(function*() {
        yield* Effect.void.pipe(Effect.withSpan("leaf a"), Effect.withSpan("hidden"))
        yield* Effect.void.pipe(Effect.withSpan("leaf b"))
        const open = yield* Effect.makeSpan("open")
        expect(open.status._tag).toBe("Started")
      }).pipe(Effect.withSpan("root"), Effect.withTracer(recorder.tracer))
      const keep = (span: { readonly name: string }) => span.name !== "hidden"
      const trees = SpanTree.fromSpans(recorder.spans, { keep })
      expect(trees.map((t) => t.span.name)).toEqual(["root"])
      expect(trees[0]?.children.map((c) => c.span.name)).toEqual(["leaf a", "leaf b", "open"])
      expect(durations(SpanTree.format(trees))).toBe("root  <t>\n├─ leaf a  <t>\n├─ leaf b  <t>\n└─ open  running\n")
      // Spans whose parent is not among them are roots of their own.
      const orphans = SpanTree.fromSpans(recorder.spans, { keep: (span) => span.name.startsWith("leaf") })
      expect(orphans.map((t) => t.span.name)).toEqual(["leaf a", "leaf b"])
      expect(SpanTree.render([])).toBe("")
    }))
})

describe("SpanTree's entry", () => {
  it("the root entry reaches SpanTree without loading the testing kit (ScriptedModel, FakeCli)", () => {
    const src = fileURLToPath(new URL("../../src/", import.meta.url))
    const seen = new Set<string>()
    const visit = (file: string) => {
      if (seen.has(file)) return
      seen.add(file)
      const text = fs.readFileSync(file, "utf8")
      for (const match of text.matchAll(/^(?:import|export)[^"']*?from\s+["'](\.[^"']+)["']/gm)) {
        const target = path.resolve(path.dirname(file), (match[1] ?? "").replace(/\.js$/, ".ts"))
        visit(target)
      }
    }
    visit(path.join(src, "index.ts"))
    expect(seen.has(path.join(src, "SpanTree.ts"))).toBe(true)
    expect([...seen].filter((file) => file.startsWith(path.join(src, "testing")))).toEqual([])
  })
})
