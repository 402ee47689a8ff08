// The relay for the end-to-end tests: `src/relay/bin.ts` in a child process (run by tsx) on
// 127.0.0.1 with a free port, configured by environment as users run it, always stopped with its
// scope. And the host's side: `Transport.layerWebSocket` in front of the agent.
import { NodeSocket } from "@effect/platform-node"
import { Deferred, type Duration, Effect, Exit, Layer, Redacted, Schedule } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as Discovery from "../../src/internal/cli/discovery.js"
import * as Transport from "../../src/services/Transport.js"
import { isAlive } from "../support/processes.js"

const root = fileURLToPath(new URL("../..", import.meta.url))

export const token = "relay-test-token-0123456789"

/** The keys ScriptedModel's options set: the relay lets the host set these and no others. */
export const allowedEnv = [
  "ANTHROPIC_BASE_URL",
  "ANTHROPIC_API_KEY",
  "HOME",
  "CLAUDE_CONFIG_DIR",
  "DISABLE_TELEMETRY",
  "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
  "DISABLE_AUTOUPDATER",
  "DISABLE_ERROR_REPORTING"
]

/** ScriptedModel's working directories are below the (resolved) temporary directory. */
export const allowedRoot = fs.realpathSync(os.tmpdir())

export interface RunningRelay {
  readonly url: string
  readonly child: ChildProcess
  readonly output: () => string
}

const stopChild = (child: ChildProcess) =>
  Effect.async<void>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000)
    child.once("exit", () => {
      clearTimeout(timer)
      resume(Effect.void)
    })
    child.kill("SIGTERM")
  })

/** Starts the relay bin in a child process; it is stopped (SIGTERM, then SIGKILL) when the scope closes. */
export const startRelay = (env: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const cli = yield* Discovery.findCli(undefined, process.env)
    const child = yield* Effect.acquireRelease(
      Effect.sync(() =>
        spawn(process.execPath, ["--import", "tsx", path.join(root, "src/relay/bin.ts")], {
          cwd: root,
          env: {
            ...process.env,
            CLAUDE_RELAY_TOKEN: token,
            CLAUDE_RELAY_PORT: "0",
            CLAUDE_RELAY_ROOTS: allowedRoot,
            CLAUDE_RELAY_ALLOW_ENV: allowedEnv.join(","),
            CLAUDE_RELAY_EXECUTABLE: cli,
            ...env
          },
          stdio: ["ignore", "pipe", "pipe"]
        })
      ),
      stopChild
    )
    let output = ""
    const listening = yield* Deferred.make<string, string>()
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString()
      const match = /"listening":"([^"]+)"/.exec(output)
      if (match?.[1] !== undefined) Deferred.unsafeDone(listening, Exit.succeed(match[1]))
    })
    child.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString()
    })
    child.once("exit", (code) => Deferred.unsafeDone(listening, Exit.fail(`relay exited (${code}): ${output}`)))
    const url = yield* Deferred.await(listening).pipe(
      Effect.timeoutFail({ duration: "30 seconds", onTimeout: () => `relay did not start: ${output}` }),
      Effect.orDie
    )
    const relay: RunningRelay = { url, child, output: () => output }
    return relay
  })

/** An agent whose sessions run on the relay. */
export const relayAgent = (url: string, config: Partial<Transport.WebSocketConfig> = {}) =>
  ClaudeAgent.make({
    transport: Transport.Transport.layerWebSocket({ url, token: Redacted.make(token), ...config }).pipe(
      Layer.provide(NodeSocket.layerWebSocketConstructor)
    )
  })

/** Waits (up to `within`) until the process is gone; succeeds with whether it is. */
export const goneWithin = (pid: number, within: Duration.DurationInput = "15 seconds") =>
  Effect.sync(() => isAlive(pid)).pipe(
    Effect.repeat({ while: (alive) => alive, schedule: Schedule.spaced("100 millis") }),
    Effect.timeoutTo({ duration: within, onSuccess: () => true, onTimeout: () => false })
  )
