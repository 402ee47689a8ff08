// The README's "run it" example: an agent session on the real `claude` binary.
//
//   npm start                 offline: the CLI talks to ScriptedModel on 127.0.0.1 (no key, no network)
//   npm start -- --live       the real Anthropic API (needs ANTHROPIC_API_KEY; also chosen when it is set)
//
// It prints the conversation as it streams, with a live status line (thinking / calling a tool /
// writing), then the cost and usage summary. The test suite runs `runDemo` offline so it cannot rot.
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Stream } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { Schema } from "effect"
import { ClaudeAgent, Hook, McpServer, Message, Permission, Tool } from "../../src/index.js"
import type { Options } from "../../src/index.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"

export interface DemoResult {
  readonly transcript: string
  readonly result: Message.ResultMessage | undefined
  readonly cwd: string
}

const PROMPT = "Count the words in 'effect systems make agents testable', then create a file named hello.txt " +
  "containing a one-line greeting, then tell me what you did."

// An in-process MCP tool: the input is a Schema, the handler an Effect.
const wordCount = Tool.make("word_count", {
  description: "Counts the words in a text",
  parameters: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => Effect.succeed(`${text.trim().split(/\s+/).filter((w) => w.length > 0).length} words`)
})
const demoServer = McpServer.make({ name: "demo", version: "1.0.0", tools: [wordCount] })

// What the scripted model says: a thought, a Write tool call, and a final answer once the tool
// result comes back. Rules match on the request, not on position: the CLI makes requests of its own.
const script: ReadonlyArray<ScriptedModel.Rule> = [
  {
    match: (req) => ScriptedModel.toolResultCount(req) === 0,
    reply: ScriptedModel.thinking(
      "First count the words with the word_count tool.",
      ScriptedModel.toolUse("mcp__demo__word_count", { text: "effect systems make agents testable" })
    )
  },
  {
    match: (req) => ScriptedModel.toolResultCount(req) === 1,
    reply: ScriptedModel.thinking(
      "Five words. Now the file: I will use the Write tool.",
      ScriptedModel.toolUse("Write", { file_path: "hello.txt", content: "Hello from effect-claude-agent!\n" })
    )
  },
  {
    match: (req) => ScriptedModel.toolResultCount(req) >= 2,
    reply: ScriptedModel.slowText("The text has 5 words, and I created hello.txt with a one-line greeting.", {
      chunkSize: 6,
      delayMs: 15
    })
  }
]

const status = (m: Message.Message): string | undefined => {
  if (m.type === "stream_event") {
    const event = m.event
    if (event.type === "content_block_start" && "content_block" in event) {
      const block = event.content_block
      if (typeof block === "object" && block !== null && "type" in block) {
        if (block.type === "thinking") return "thinking…"
        if (block.type === "tool_use" && "name" in block) return `calling tool ${String(block.name)}…`
        if (block.type === "text") return "writing…"
      }
    }
    return undefined
  }
  if (m.type === "system" && m.subtype === "status" && m.status === "requesting") return "waiting for the model…"
  if (m.type === "system" && m.subtype === "session_state_changed" && m.state === "requires_action") {
    return "waiting for permission…"
  }
  return undefined
}

/** Runs the example session and reports what happened through `write`. */
export const runDemo = (
  options: Options.Options,
  write: (text: string) => void
) =>
  Effect.gen(function*() {
    let transcript = ""
    const out = (text: string) => {
      transcript += text
      write(text)
    }
    let result: Message.ResultMessage | undefined
    let streamedText = false
    out(`> ${PROMPT}\n`)
    // A hook that watches every tool call, and a permission policy that only lets files be
    // written inside the working directory.
    const watchTools = Hook.on("PreToolUse", (input) =>
      Effect.sync(() => out(`  [hook] PreToolUse ${input.tool_name}\n`)).pipe(Effect.as({})))
    const cwd = options.cwd ?? process.cwd()
    const policy: Permission.CanUseTool = (toolName, input) =>
      Effect.sync(() => {
        const target = typeof input.file_path === "string" ? path.resolve(cwd, input.file_path) : undefined
        const inside = target !== undefined && !path.relative(cwd, target).startsWith("..")
        const decision = toolName !== "Write" || inside
          ? Permission.allow()
          : Permission.deny("files may only be written inside the working directory")
        out(`  [permission] ${toolName} ${target ?? ""} → ${decision.behavior}\n`)
        return decision
      })
    yield* ClaudeAgent.query(PROMPT, {
      includePartialMessages: true,
      // `requires_action` run states, to show when the CLI waits for the permission policy.
      includeSessionState: true,
      mcpServers: { demo: demoServer },
      hooks: { PreToolUse: [{ hooks: [watchTools] }] },
      canUseTool: policy,
      ...options
    }).pipe(
      Stream.runForEach((m) =>
        Effect.sync(() => {
          const s = status(m)
          if (s !== undefined) {
            out(`  [${s}]\n`)
          }
          if (m.type === "stream_event") {
            const delta = Message.textDelta(m)
            if (delta !== undefined) {
              streamedText = true
              out(delta)
            }
            return
          }
          if (Message.isAssistant(m)) {
            for (const block of m.message.content) {
              if (block.type === "thinking") {
                out(`  (thought: ${block.thinking})\n`)
              }
              if (block.type === "tool_use") {
                out(`  tool_use ${block.name} ${JSON.stringify(block.input)}\n`)
              }
              if (block.type === "text" && !streamedText) {
                out(block.text)
              }
            }
            if (streamedText) {
              out("\n")
            }
            streamedText = false
          }
          if (Message.isUser(m) && typeof m.message.content !== "string") {
            for (const block of m.message.content) {
              if (block.type === "tool_result") {
                const content = typeof block.content === "string" ? block.content : JSON.stringify(block.content)
                out(`  tool_result ${block.is_error === true ? "(error) " : ""}${content.slice(0, 120)}\n`)
              }
            }
          }
          if (Message.isResult(m)) {
            result = m
          }
        })
      )
    )
    if (result !== undefined) {
      const usage = result.usage
      out(
        `\n— ${result.subtype}${result.is_error ? " (error)" : ""}: ${result.num_turns} turns, ` +
          `${result.duration_ms} ms, $${(result.total_cost_usd ?? 0).toFixed(4)}` +
          (usage === undefined ? "" : `, ${usage.input_tokens} tokens in / ${usage.output_tokens} out`) +
          "\n"
      )
    }
    return { transcript, result, cwd: options.cwd ?? process.cwd() } satisfies DemoResult
  })

/** The offline run: a ScriptedModel and its isolated HOME / working directory. */
export const runOffline = (write: (text: string) => void) =>
  Effect.gen(function*() {
    const model = yield* ScriptedModel.make(script)
    const options = yield* model.options()
    const demo = yield* runDemo(options, write)
    const file = path.join(options.cwd, "hello.txt")
    const written = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : undefined
    write(written === undefined ? "hello.txt was not written\n" : `hello.txt now contains: ${written}`)
    return { ...demo, written }
  })

const main = Effect.gen(function*() {
  const live = process.argv.includes("--live") ||
    (process.env.ANTHROPIC_API_KEY !== undefined && !process.argv.includes("--offline"))
  const write = (text: string) => void process.stdout.write(text)
  if (live) {
    write("(live: the real Anthropic API)\n")
    const cwd = fs.mkdtempSync(path.join(fs.realpathSync(process.env.TMPDIR ?? "/tmp"), "demo-"))
    yield* runDemo({ cwd }, write)
  } else {
    write("(offline: the real claude CLI against a scripted model on 127.0.0.1; --live for the real API)\n")
    yield* Effect.scoped(runOffline(write))
  }
})

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main.pipe(
    Effect.provide(ClaudeAgent.layer.pipe(Layer.provide(NodeContext.layer))),
    NodeRuntime.runMain
  )
}
