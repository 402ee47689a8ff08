// Turns through the cluster entity in one process: `AgentCluster.layerSqlite` on a temporary
// SQLite file over the fake CLI (no model, no process), so what is measured is the entity's and
// the cluster's own cost per turn: persisting the request and each reply chunk, the transcript
// mirror, the session bookkeeping.
//
//   npx tsx scripts/cluster/bench-turns.ts [turns=200]
//
// Prints milliseconds per turn for turns on one conversation, one after another.
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer, Stream } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { AgentCluster, AgentEntity } from "../../src/cluster/index.js"
import * as FakeCli from "../../src/testing/FakeCli.js"

const turns = Number(process.argv[2] ?? 200)

const program = Effect.gen(function*() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-turns-"))
  yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
  const agent = FakeCli.layerClaudeAgent({ onUserMessage: FakeCli.echoTurn })
  const cluster = AgentCluster.layerSqlite({
    filename: path.join(dir, "cluster.db"),
    orphanGuard: false,
    options: { cwd: dir, env: { CLAUDE_CONFIG_DIR: path.join(dir, "config") } }
  }).pipe(Layer.provide(agent), Layer.provideMerge(NodeContext.layer))
  yield* Effect.gen(function*() {
    const turn = (i: number) => Stream.runDrain(AgentEntity.send("bench", `turn ${i}`))
    yield* Effect.forEach(Array.from({ length: 10 }, (_, i) => i), turn) // warm-up
    const start = performance.now()
    yield* Effect.forEach(Array.from({ length: turns }, (_, i) => i), turn)
    const perTurn = (performance.now() - start) / turns
    process.stdout.write(`${turns} turns on one conversation: ${perTurn.toFixed(2)} ms per turn\n`)
  }).pipe(Effect.provide(cluster))
}).pipe(Effect.scoped)

Effect.runPromise(program).catch((e) => {
  process.stderr.write(`${e}\n`)
  process.exit(1)
})
