// The README's "Testing your agent code" example, verbatim: it must keep working as users copy it.
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Stream } from "effect"
import { ClaudeAgent, Message } from "effect-claude-agent"
import { FakeCli } from "effect-claude-agent/testing"

// The code under test: answers a question with the agent.
const ask = (question: string) =>
  ClaudeAgent.query(question).pipe(
    Stream.filter(Message.isAssistant),
    Stream.map(Message.assistantText),
    Stream.runCollect,
    Effect.map(Chunk.join(""))
  )

describe("ask", () => {
  it.effect("returns the model's text", () =>
    Effect.gen(function*() {
      expect(yield* ask("capital of France?")).toBe("Paris")
    }).pipe(Effect.provide(FakeCli.layerClaudeAgent({
      onUserMessage: (_message, cli) =>
        Effect.forEach(
          [cli.frames.systemInit(), cli.frames.assistantText("Paris"), cli.frames.result("Paris")],
          cli.emit
        )
    }))))
})
