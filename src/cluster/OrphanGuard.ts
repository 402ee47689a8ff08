/**
 * `OrphanGuard`: no CLI outlives a runner that was killed.
 *
 * Each CLI runs in its own process group, and a session's scope stops it. A runner killed with
 * SIGKILL (or by the kernel's OOM killer) runs no finalizer: its CLIs see their stdin close, and a
 * CLI in the middle of a turn **finishes that turn** before it exits on end of input (observed on
 * CLI 2.1.330: a reply streaming for 10 s ran to its end, 13 s after the kill), calling the model
 * and running tools, while the conversation's entity is already re-running the turn on another
 * runner. `layerWatchdog` starts a small watchdog process that holds the other end of a pipe from
 * the runner: when the runner dies, the pipe closes, and the watchdog kills the process groups of
 * the CLIs the runner had registered, at once.
 *
 * @since 0.1.0
 */
import { Command, type CommandExecutor } from "@effect/platform"
import { Context, Deferred, Effect, Layer, Mailbox, type Scope, Stream } from "effect"

/**
 * The guard's operation.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { OrphanGuard } from "effect-claude-agent/cluster"
 *
 * // Guarded until the scope closes: close it only after the process has exited.
 * const guard = (shape: OrphanGuard.OrphanGuardShape, pid: number) => Effect.scoped(shape.watch(pid))
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface OrphanGuardShape {
  /**
   * Registers a CLI process (its process group) until the current scope closes, and returns once
   * the watchdog holds it. Close that scope only after the process has exited.
   */
  readonly watch: (pid: number) => Effect.Effect<void, never, Scope.Scope>
}

/**
 * The `OrphanGuard` service. `AgentEntity` registers every CLI it starts when the service is in
 * its context (`AgentCluster.layerSqlite` provides it).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { OrphanGuard } from "effect-claude-agent/cluster"
 *
 * const guarded = (pid: number) => Effect.flatMap(OrphanGuard.OrphanGuard, (guard) => guard.watch(pid))
 * ```
 *
 * @since 0.1.0
 * @category tags
 */
export class OrphanGuard extends Context.Tag("effect-claude-agent/cluster/OrphanGuard")<
  OrphanGuard,
  OrphanGuardShape
>() {}

// The watchdog: `+pid` / `-pid` lines on stdin; at end of input (the runner exited, however) it
// kills the process groups still registered. It ignores SIGINT and SIGHUP (a terminal's Ctrl-C
// reaches the runner, which closes its sessions itself) and obeys SIGTERM after the same cleanup.
const SCRIPT = `
const pids = new Set(); let buf = "";
const killAll = () => { for (const p of pids) { try { process.kill(-p, "SIGKILL") } catch {} } process.exit(0) };
process.on("SIGINT", () => {}); process.on("SIGHUP", () => {}); process.on("SIGTERM", killAll);
process.stdin.setEncoding("utf8");
process.stdin.on("data", (d) => {
  buf += d; let i;
  while ((i = buf.indexOf("\\n")) >= 0) {
    const line = buf.slice(0, i); buf = buf.slice(i + 1);
    const pid = Number(line.slice(1));
    if (!Number.isInteger(pid) || pid <= 1) continue;
    if (line[0] === "+") { pids.add(pid); process.stdout.write("+" + pid + "\\n") } else pids.delete(pid);
  }
});
process.stdin.on("end", killAll);
process.stdout.write("ready\\n");
`

const nodeExecutable = (): string => {
  const proc: unknown = Reflect.get(globalThis, "process")
  const execPath = typeof proc === "object" && proc !== null ? Reflect.get(proc, "execPath") : undefined
  return typeof execPath === "string" && execPath.length > 0 ? execPath : "node"
}

/**
 * Starts the watchdog (a `node -e` process in a process group of its own) for the lifetime of the
 * layer. Needs Node and a `CommandExecutor` (`NodeContext.layer`). Use it only with real CLI
 * processes: the fake CLI of the testing kit reports a made-up pid.
 *
 * @example
 * ```ts
 * import { NodeContext } from "@effect/platform-node"
 * import { Layer } from "effect"
 * import { AgentEntity, OrphanGuard } from "effect-claude-agent/cluster"
 *
 * const entity = AgentEntity.layer().pipe(Layer.provide(OrphanGuard.layerWatchdog), Layer.provide(NodeContext.layer))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWatchdog: Layer.Layer<OrphanGuard, never, CommandExecutor.CommandExecutor> = Layer.scoped(
  OrphanGuard,
  Effect.gen(function*() {
    const lines = yield* Mailbox.make<string>()
    const acks = new Map<number, Deferred.Deferred<void>>()
    const ready = yield* Deferred.make<void>()
    const proc = yield* Command.start(
      Command.make(nodeExecutable(), "-e", SCRIPT).pipe(Command.stdin("pipe"), Command.stderr("inherit"))
    ).pipe(Effect.orDie)
    const encoder = new TextEncoder()
    yield* Mailbox.toStream(lines).pipe(
      Stream.map((line) => encoder.encode(line)),
      Stream.run(proc.stdin),
      Effect.ignore,
      Effect.forkScoped
    )
    // The watchdog says `ready`, then `+pid` once it holds a registration.
    yield* proc.stdout.pipe(
      Stream.decodeText(),
      Stream.splitLines,
      Stream.runForEach((line) => {
        if (line === "ready") return Deferred.succeed(ready, undefined)
        const acked = acks.get(Number(line.slice(1)))
        return acked === undefined ? Effect.void : Deferred.succeed(acked, undefined)
      }),
      Effect.ignore,
      Effect.forkScoped
    )
    yield* Deferred.await(ready)
    yield* Effect.addFinalizer(() => lines.end)
    // Returns once the watchdog holds the pid: a runner killed right after still takes it along.
    const register = (pid: number) =>
      Effect.gen(function*() {
        const acked = yield* Deferred.make<void>()
        acks.set(pid, acked)
        yield* lines.offer(`+${pid}\n`)
        yield* Deferred.await(acked)
      }).pipe(Effect.ensuring(Effect.sync(() => acks.delete(pid))))
    return {
      watch: (pid) => Effect.acquireRelease(register(pid), () => lines.offer(`-${pid}\n`)).pipe(Effect.asVoid)
    }
  })
)
