// Turns from client-only nodes through the socket layout on PostgreSQL, in one process: a runner
// (`AgentCluster.layerSocketRunner` over the fake CLI: no model, no process) and client nodes
// (`layerSocketClient`), each with its own connection pool. The runner polls for stored messages
// every 10 s (`@effect/cluster`'s default), so what a turn costs when it is not sent straight to
// its runner shows: a freshly started client node sends before it knows the conversation's owner.
//
//   scripts/ci/with-postgres.sh npx tsx scripts/cluster/bench-client.ts [turns=10]
//   DATABASE_URL=postgres://… npx tsx scripts/cluster/bench-client.ts [turns=10]
//
// Prints the milliseconds of each turn of one long-lived client, and of the first turn of each of
// `turns` freshly built client nodes.
import { NodeContext } from "@effect/platform-node"
import { ConfigProvider, Effect, Exit, Layer, Scope, Stream } from "effect"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { AgentCluster, AgentEntity } from "../../src/cluster/index.js"
import * as SessionStores from "../../src/layers/SessionStores.js"
import * as FakeCli from "../../src/testing/FakeCli.js"
import { pgLayer } from "./layers.js"

const turns = Number(process.argv[2] ?? 10)
const url = process.env.DATABASE_URL
if (url === undefined || url === "") {
  process.stderr.write("DATABASE_URL is not set (run it inside scripts/ci/with-postgres.sh)\n")
  process.exit(2)
}

const secret = ConfigProvider.fromMap(new Map([["AGENT_CLUSTER_SECRET", randomBytes(32).toString("base64")]]))
const prefix = `bench_${Date.now().toString(36)}`
const port = 20000 + Math.floor(Math.random() * 12000)

const program = Effect.gen(function*() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-client-"))
  yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
  const agent = FakeCli.layerClaudeAgent({ onUserMessage: FakeCli.echoTurn })
  const runner = AgentEntity.layer({ options: { cwd: dir, env: { CLAUDE_CONFIG_DIR: path.join(dir, "config") } } })
    .pipe(
      Layer.provide([agent, SessionStores.layerMemory, NodeContext.layer]),
      Layer.provideMerge(AgentCluster.layerSocketRunner({
        host: "127.0.0.1",
        port,
        prefix,
        shardingConfig: { entityMessagePollInterval: 10_000 }
      })),
      Layer.provide(pgLayer(url))
    )
  yield* Layer.build(runner)
  const buildClient = (scope: Scope.Scope) =>
    Layer.buildWithScope(AgentCluster.layerSocketClient({ prefix }).pipe(Layer.provide(pgLayer(url))), scope)
  const timedTurn = (client: Effect.Effect.Success<ReturnType<typeof buildClient>>, i: number) =>
    Effect.gen(function*() {
      const start = performance.now()
      yield* AgentEntity.send("bench", `turn ${i}`).pipe(Stream.runDrain, Effect.provide(client))
      return Math.round(performance.now() - start)
    })

  const longLived = yield* buildClient(yield* Effect.scope)
  const same = yield* Effect.forEach(Array.from({ length: turns }, (_, i) => i), (i) => timedTurn(longLived, i))
  const fresh = yield* Effect.forEach(Array.from({ length: turns }, (_, i) => i), (i) =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const millis = yield* timedTurn(yield* buildClient(scope), turns + i)
      yield* Scope.close(scope, Exit.void)
      return millis
    }))
  const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
  process.stdout.write(`long-lived client, ${turns} turns: ${same.join(", ")} ms (median ${median(same)})\n`)
  process.stdout.write(`fresh client nodes, first turn: ${fresh.join(", ")} ms (median ${median(fresh)})\n`)
}).pipe(Effect.scoped, Effect.withConfigProvider(secret))

Effect.runPromise(program).then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`${e}\n`)
    process.exit(1)
  }
)
