// The README's `npm run example:cluster`, run offline by the suite so it cannot rot: two
// conversations as cluster entities on one SQLite file, then a "restart" on the same file where a
// conversation goes on in a new, resumed CLI.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { runOffline } from "../../scripts/examples/cluster.js"
import { claudePids } from "../support/processes.js"

describe("e2e: the cluster example (npm run example:cluster)", () => {
  it.scopedLive("runs two conversations through the cluster, then one goes on after a restart", () =>
    Effect.gen(function*() {
      let printed = ""
      const run = yield* runOffline((text) => {
        printed += text
      })
      // Every answer needed the conversation's earlier turns (the scripted model checks them).
      expect([...run.answers].sort()).toEqual([
        ["alice", "Nice to meet you, Alice. Stamps, noted."],
        ["alice", "You collect stamps."],
        ["bob", "Hello Bob! Chess it is."],
        ["bob", "You like chess."]
      ])
      expect(run.statuses.map((s) => [s.conversationId, s.turns, s.busy])).toEqual([["alice", 2, false], [
        "bob",
        2,
        false
      ]])
      // After the restart: a new CLI, resumed from the session store, with the three earlier turns' content.
      expect(run.later).toBe("Your name is Alice.")
      expect(run.storedEntries).toBeGreaterThan(0)
      expect(printed).toContain("[alice] Your name is Alice.")
      expect(claudePids(run.home)).toEqual([])
    }))
})
