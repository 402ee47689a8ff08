// Session files written by the real `claude` binary (against ScriptedModel, isolated HOME and
// CLAUDE_CONFIG_DIR), read and changed with Sessions, then resumed by the CLI: the CLI and this
// library agree on the layout, and a renamed, tagged or forked session still resumes.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Predicate, Stream } from "effect"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import type { Options } from "../../src/schema/Options.js"
import * as Sessions from "../../src/Sessions.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"

const Live = Layer.merge(ClaudeAgent.layer.pipe(Layer.provide(NodeContext.layer)), NodeContext.layer)

// The text of a stored message or of a request message: string content or its text blocks.
const textOf = (message: unknown): string => {
  const content = Predicate.isRecord(message) ? message.content : undefined
  if (typeof content === "string") return content
  if (!Array.isArray(content)) return ""
  return content.flatMap((b) =>
    Predicate.isRecord(b) && b.type === "text" && typeof b.text === "string" ? [b.text] : []
  )
    .join("")
}

describe("e2e: Sessions on the real CLI's transcripts", () => {
  it.scopedLive("two sessions: list, read, rename, tag, fork, resume the fork, archive and resume the original, delete", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([
        {
          match: (r) => ScriptedModel.lastUserText(r).includes("alpha question"),
          reply: ScriptedModel.text("alpha answer")
        },
        {
          match: (r) => ScriptedModel.lastUserText(r).includes("beta question"),
          reply: ScriptedModel.text("beta answer")
        },
        {
          match: (r) => ScriptedModel.lastUserText(r).includes("in the fork"),
          reply: ScriptedModel.text("fork answer")
        },
        {
          match: (r) => ScriptedModel.lastUserText(r).includes("alpha again"),
          reply: ScriptedModel.text("alpha resumed")
        }
      ])
      const options = yield* model.options()
      const configDir = options.env.CLAUDE_CONFIG_DIR
      const where = { configDir }
      const turn = (prompt: string, extra: Partial<Options> = {}) =>
        Effect.scoped(Effect.gen(function*() {
          const session = yield* ClaudeAgent.session({ ...options, ...extra })
          yield* session.send(prompt)
          yield* session.receiveResponse.pipe(Stream.runDrain)
          return yield* session.sessionId
        }))

      const alpha = yield* turn("alpha question")
      const beta = yield* turn("beta question")

      // Listed newest first, for the project and for every project alike.
      const listed = yield* Sessions.listSessions({ ...where, dir: options.cwd })
      expect(listed.map((s) => s.sessionId)).toEqual([beta, alpha])
      expect(listed[1]).toMatchObject({ summary: "alpha question", firstPrompt: "alpha question", cwd: options.cwd })
      expect((yield* Sessions.listSessions(where)).map((s) => s.sessionId)).toEqual([beta, alpha])
      expect(yield* Sessions.listSessions({ ...where, limit: 1, offset: 1 })).toEqual([listed[1]])
      // Sessions the SDK started are programmatic: an IDE-style picker hides them.
      expect(yield* Sessions.listSessions({ ...where, includeProgrammatic: false })).toEqual([])

      const messages = yield* Sessions.getSessionMessages(alpha, where)
      expect(messages.map((m) => [m.type, textOf(m.message)])).toEqual([
        ["user", "alpha question"],
        ["assistant", "alpha answer"]
      ])
      expect(messages.every((m) => m.session_id === alpha)).toBe(true)

      yield* Sessions.renameSession(alpha, "Alpha work", where)
      yield* Sessions.tagSession(alpha, "keep", where)
      expect(yield* Sessions.getSessionInfo(alpha, where)).toMatchObject({
        summary: "Alpha work",
        customTitle: "Alpha work",
        tag: "keep"
      })

      const fork = yield* Sessions.forkSession(alpha, where)
      expect(fork.sessionId).not.toBe(alpha)
      expect(yield* Sessions.getSessionInfo(fork.sessionId, where)).toMatchObject({ customTitle: "Alpha work (fork)" })
      const copied = yield* Sessions.getSessionMessages(fork.sessionId, where)
      expect(copied.map((m) => textOf(m.message))).toEqual(["alpha question", "alpha answer"])
      expect(copied.map((m) => m.uuid)).not.toEqual(messages.map((m) => m.uuid))

      // The CLI resumes the fork: the model is sent the copied turn before the new prompt.
      const resumed = yield* turn("in the fork", { resume: fork.sessionId })
      expect(resumed).toBe(fork.sessionId)
      const forkRequest = (yield* model.mainRequests).find((r) => ScriptedModel.lastUserText(r).includes("in the fork"))
      const sent = (forkRequest?.messages ?? []).map(textOf)
      expect(sent).toContain("alpha answer")
      expect(sent.some((t) => t.includes("alpha question"))).toBe(true)
      expect((yield* Sessions.getSessionMessages(fork.sessionId, where)).map((m) => textOf(m.message))).toEqual([
        "alpha question",
        "alpha answer",
        "in the fork",
        "fork answer"
      ])

      // The renamed, tagged and archived original resumes too and keeps its title and tag; the
      // prompt sent in it unarchives it.
      yield* Sessions.archiveSession(alpha, where)
      expect((yield* Sessions.getSessionInfo(alpha, where)).archived).toBe(true)
      expect(yield* turn("alpha again", { resume: alpha })).toBe(alpha)
      const again = (yield* model.mainRequests).find((r) => ScriptedModel.lastUserText(r).includes("alpha again"))
      expect((again?.messages ?? []).map(textOf)).toContain("alpha answer")
      expect(yield* Sessions.getSessionInfo(alpha, where)).toMatchObject({
        customTitle: "Alpha work",
        tag: "keep",
        archived: false
      })

      yield* Sessions.deleteSession(beta, where)
      expect((yield* Sessions.listSessions(where)).map((s) => s.sessionId).sort()).toEqual(
        [alpha, fork.sessionId].sort()
      )
      const gone = yield* Effect.flip(Sessions.getSessionMessages(beta, where))
      expect(gone._tag).toBe("SessionNotFoundError")
    }).pipe(Effect.provide(Live)))
})
