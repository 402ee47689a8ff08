// The byte-streams example (scripts/examples/byteStreams.ts), run by the suite so it cannot rot:
// the real `claude` binary behind `sh -c 'exec …'`, its streams wrapped and handed to
// `Transport.fromByteStreams` (not the subprocess transport), against ScriptedModel: a prompt
// answered with a tool call a hook sees, then an interrupted turn; no CLI left afterwards.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { runByteStreams } from "../../scripts/examples/byteStreams.js"
import * as Discovery from "../../src/internal/cli/discovery.js"
import { isAlive } from "../support/processes.js"

describe("e2e: the CLI over byte streams (scripts/examples/byteStreams.ts)", () => {
  it.live("a prompt answered, a hook called, an interrupt; the CLI is gone when the scope closes", () =>
    Effect.gen(function*() {
      const cli = yield* Discovery.findCli(undefined, process.env)
      let printed = ""
      const run = yield* Effect.scoped(runByteStreams(cli, (text) => {
        printed += text
      }))
      expect(run.answer).toBe("There is no README here.")
      expect(run.hooked).toEqual(["Bash"])
      expect(run.interrupted).toBe("error_during_execution")
      expect(printed).toContain("[hook] PreToolUse Bash")
      expect(printed).not.toContain("no rule matched")
      // `exec` made the shell the CLI: the pid reported is the CLI's, and it has exited.
      const pid = Option.getOrThrow(run.pid)
      expect(isAlive(pid)).toBe(false)
    }).pipe(Effect.provide(NodeContext.layer)))
})
