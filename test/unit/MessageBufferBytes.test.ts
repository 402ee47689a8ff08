// messageBufferBytes bounds the queued messages by their size in UTF-8 bytes, as the CLI wrote
// them: non-Latin text reaches the cap at its byte size (three bytes per CJK character), not at
// its length in UTF-16 code units. Over the fake CLI.
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Logger, Stream } from "effect"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as Message from "../../src/schema/Message.js"
import * as FakeCli from "../../src/testing/FakeCli.js"

const COUNT = 30
const CAP = 64 * 1024

// A turn of COUNT assistant messages of 1000 times `char` each, then the result.
const flood = (char: string) =>
  FakeCli.layerClaudeAgent({
    onUserMessage: (_message, cli) =>
      Effect.gen(function*() {
        for (let i = 0; i < COUNT; i++) yield* cli.emit(FakeCli.frames.assistantText(char.repeat(1000)))
        yield* cli.emit(FakeCli.frames.result("done"))
      })
  })

// Runs the turn with nobody reading until the CLI is done; returns the "queue full" warnings.
const warningsFor = (char: string) =>
  Effect.gen(function*() {
    const warnings: Array<string> = []
    const logger = Logger.make(({ logLevel, message }) => {
      if (logLevel._tag === "Warning") warnings.push([message].flat().map(String).join(" "))
    })
    const session = yield* ClaudeAgent.session({ messageBufferBytes: CAP }).pipe(
      Effect.provide(flood(char)),
      Effect.provide(Logger.replace(Logger.defaultLogger, logger))
    )
    yield* session.send("go")
    const messages = yield* session.receiveResponse.pipe(Stream.runCollect)
    expect(Chunk.toArray(messages).filter(Message.isAssistant)).toHaveLength(COUNT)
    return warnings.filter((w) => w.includes("messageBufferBytes"))
  })

describe("messageBufferBytes counts UTF-8 bytes", () => {
  // About 40 KB of UTF-16 code units either way; the CJK turn is about 100 KB of UTF-8.
  it.scoped("Latin text under the cap in bytes: the reader never waits", () =>
    Effect.gen(function*() {
      expect(yield* warningsFor("x")).toEqual([])
    }))

  it.scoped("the same number of CJK characters is three times the bytes: the reader waits at the cap", () =>
    Effect.gen(function*() {
      const warnings = yield* warningsFor("語")
      expect(warnings).toHaveLength(1)
      const queued = Number(/(\d+) bytes of messages/.exec(warnings[0] ?? "")?.[1])
      expect(queued).toBeGreaterThanOrEqual(CAP)
    }))
})
