// For the OrphanGuard test: starts `sleep 300` in a process group of its own (as the CLI runs),
// registers it with OrphanGuard.layerWatchdog, prints its pid and waits to be killed.
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { spawn } from "node:child_process"
import * as OrphanGuard from "../../src/cluster/OrphanGuard.js"

Effect.gen(function*() {
  const guard = yield* OrphanGuard.OrphanGuard
  const sleeper = spawn("sleep", ["300"], { detached: true, stdio: "ignore" })
  const pid = sleeper.pid
  if (pid === undefined) return yield* Effect.die("sleep did not start")
  yield* guard.watch(pid)
  process.stdout.write(`${pid}\n`)
  return yield* Effect.never
}).pipe(
  Effect.scoped,
  Effect.provide(OrphanGuard.layerWatchdog.pipe(Layer.provide(NodeContext.layer))),
  NodeRuntime.runMain
)
