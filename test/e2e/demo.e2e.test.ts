// The README's `npm start` example, run offline by the suite so it cannot rot: the real `claude`
// binary against ScriptedModel, the model writes a file with the Write tool and then answers.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { runOffline } from "../../scripts/examples/demo.js"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"

const AgentLive = ClaudeAgent.layer.pipe(Layer.provide(NodeContext.layer))

describe("e2e: the offline demo (npm start)", () => {
  it.scopedLive("runs the example agent end to end and prints the conversation and summary", () =>
    Effect.gen(function*() {
      let printed = ""
      const demo = yield* runOffline((text) => {
        printed += text
      })
      expect(demo.result?.subtype).toBe("success")
      expect(demo.result?.is_error).toBe(false)
      expect(demo.written).toBe("Hello from effect-claude-agent!\n")
      expect(printed).toContain("tool_use mcp__demo__word_count")
      expect(printed).toContain("tool_result [{\"type\":\"text\",\"text\":\"5 words\"}]")
      expect(printed).toContain("[hook] PreToolUse Write")
      expect(printed).toContain("[waiting for permission…]")
      expect(printed).toMatch(/\[permission\] Write \S+hello\.txt → allow/)
      expect(printed).toContain("[calling tool Write…]")
      expect(printed).toContain("The text has 5 words, and I created hello.txt with a one-line greeting.")
      expect(printed).not.toContain("no rule matched")
      expect(printed).toMatch(/— success: \d+ turns, \d+ ms, \$\d+\.\d{4}/)
    }).pipe(Effect.provide(AgentLive)))
})
