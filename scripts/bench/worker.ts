// One benchmark process: a contender (argv[2]: library | floor | protocolFloor | official | raw | baseline) runs
// the jobs run.ts sends over IPC. Built by run.ts with esbuild into a plain .mjs so no loader sits
// in the process; the library is imported from the URL in argv[3] (dist/esm, or src/ under tsx;
// for the baseline, another checkout's dist/esm).
//
// Every contender implements one primitive, `runQuery(prompt, features, onMessage)`: spawn the
// fake CLI, run one prompt, call `onMessage` per delivered message, resolve when the query is
// over. All timing, CPU and memory accounting is shared code below, so the contenders are
// measured identically.
import { type ChildProcessWithoutNullStreams, execFileSync, spawn } from "node:child_process"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { Session } from "node:inspector"
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import type {
  Clock as ClockNs,
  Deferred as DeferredNs,
  Effect as EffectNs,
  Runtime as RuntimeNs,
  StreamEmit as EmitNs,
  Tracer as TracerNs
} from "effect"
import type { Contender, FromWorker, Job, Sample, ToWorker } from "./workloads.js"
import { sizes } from "./workloads.js"

type Lib = typeof import("effect-claude-agent")
type Official = typeof import("@anthropic-ai/claude-agent-sdk")

// run.ts passes the paths: this file runs from an esbuild output directory, not from here.
const [, , contenderArg, libraryUrl, cliArg] = process.argv
let CLI = cliArg ?? ""

/** The fake CLI's path, for a script that imports the floors (scripts/bench/floorSteps.ts). */
export const useCli = (path: string): void => {
  CLI = path
}
// argv the SDKs pass; the raw consumer passes the same so the fake CLI sees the same launch.
const CLI_ARGS = ["--output-format", "stream-json", "--verbose", "--input-format", "stream-json"]

export interface Delivered {
  readonly type: string
  readonly subtype: string | undefined
  /** `result.result` of a successful result (the fake CLI's own measurements, as JSON). */
  readonly result: string | undefined
}

export interface Features {
  readonly hooks?: boolean
  readonly mcp?: boolean
}

export type RunQuery = (prompt: string, features: Features, onMessage: (m: Delivered) => void) => Promise<void>

const send = (message: FromWorker): void => {
  process.send?.(message)
}

// ---------------------------------------------------------------------------------------------
// contenders

const hookAnswer = {
  hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow", permissionDecisionReason: "bench" }
} as const

const loadLibrary = async (url: string): Promise<RunQuery> => {
  // effect and the platform first, so the library's own import can be told apart (issue #10:
  // "the library's own import on top of effect + @effect/platform-node ≤ 50 ms"). The platform
  // by its `NodeContext` sub-path, as the README recommends: the package's barrel loads every
  // Node module it has (HTTP, sockets, workers, undici), ~300 ms and ~30 MB that the library
  // does not use.
  const t0 = performance.now()
  const { Effect, Layer, ManagedRuntime, Schema, Stream } = await import("effect")
  const NodeContext = await import("@effect/platform-node/NodeContext")
  const t1 = performance.now()
  const cpu1 = cpuUs()
  const lib: Lib = await import(url)
  const t2 = performance.now()
  imports.importMs = t2 - t0
  imports.ownImportMs = t2 - t1
  imports.ownImportCpuMs = (cpuUs() - cpu1) / 1000
  const { ClaudeAgent, Hook, McpServer, Tool } = lib

  const runtime = ManagedRuntime.make(ClaudeAgent.layer.pipe(Layer.provide(NodeContext.layer)))
  const echo = Tool.make("echo", {
    description: "Echoes its input",
    parameters: Schema.Struct({ text: Schema.String }),
    handler: ({ text }) => Effect.succeed(Tool.text(text))
  })
  const server = McpServer.make({ name: "bench", version: "1.0.0", tools: [echo] })
  const allow = Hook.allow("bench")
  return (prompt, features, onMessage) =>
    runtime.runPromise(
      ClaudeAgent.query(prompt, {
        pathToClaudeCodeExecutable: CLI,
        ...(features.hooks === true
          ? { hooks: { PreToolUse: [{ matcher: "Bash", hooks: [() => Effect.succeed(allow)] }] } }
          : {}),
        ...(features.mcp === true ? { mcpServers: { bench: server } } : {})
      }).pipe(
        Stream.runForEach((m) => {
          onMessage({
            type: m.type,
            subtype: "subtype" in m && typeof m.subtype === "string" ? m.subtype : undefined,
            result: m.type === "result" && "result" in m && typeof m.result === "string" ? m.result : undefined
          })
          return Effect.void
        })
      )
    )
}

const loadOfficial = async (): Promise<RunQuery> => {
  const t0 = performance.now()
  const sdk: Official = await import("@anthropic-ai/claude-agent-sdk")
  const { z } = await import("zod")
  imports.importMs = performance.now() - t0
  const server = sdk.createSdkMcpServer({
    name: "bench",
    version: "1.0.0",
    tools: [
      sdk.tool(
        "echo",
        "Echoes its input",
        { text: z.string() },
        async ({ text }) => ({ content: [{ type: "text", text }] })
      )
    ]
  })
  return async (prompt, features, onMessage) => {
    const q = sdk.query({
      prompt,
      options: {
        pathToClaudeCodeExecutable: CLI,
        ...(features.hooks === true
          ? { hooks: { PreToolUse: [{ matcher: "Bash", hooks: [async () => hookAnswer] }] } }
          : {}),
        ...(features.mcp === true ? { mcpServers: { bench: server } } : {})
      }
    })
    for await (const m of q) {
      onMessage({
        type: m.type,
        subtype: "subtype" in m && typeof m.subtype === "string" ? m.subtype : undefined,
        result: m.type === "result" && m.subtype === "success" ? m.result : undefined
      })
    }
  }
}

const field = (value: unknown, key: string): unknown =>
  typeof value === "object" && value !== null ? Reflect.get(value, key) : undefined
const text = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined)

const echoResult = (message: unknown) => ({
  content: [{ type: "text", text: field(field(field(message, "params"), "arguments"), "text") }]
})

// The MCP server's answers other than tools/call (the handshake): plain data.
const mcpResult = (message: unknown): unknown => {
  const method = field(message, "method")
  return method === "initialize"
    ? { protocolVersion: "2025-11-25", capabilities: { tools: {} }, serverInfo: { name: "bench", version: "1.0.0" } }
    : method === "tools/list"
    ? {
      tools: [{
        name: "echo",
        description: "Echoes its input",
        inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] }
      }]
    }
    : method === "tools/call"
    ? echoResult(message)
    : {}
}
const mcpResponse = (message: unknown, result: unknown) => ({
  mcp_response: { jsonrpc: "2.0", id: field(message, "id") ?? 0, result }
})

/** What a hand-written consumer does to the fake CLI: write to its stdin, end it, kill it. */
interface Cli {
  readonly write: (value: unknown) => void
  readonly reply: (requestId: unknown, response: unknown) => void
  readonly end: () => void
  /** Ends the process if it is still running (a consumer that stops early). */
  readonly kill: () => void
}

// Each stdout read split into lines and parsed (the lines it completes; the rest waits for the
// next read), counted in `rawChunks`: the raw consumer's and both floors' reading.
const readLines = (stdout: NodeJS.ReadableStream, onLines: (parsed: Array<unknown>) => void): void => {
  let buffer = ""
  stdout.setEncoding("utf8")
  stdout.on("data", (chunk: string) => {
    rawChunks.count++
    rawChunks.bytes += chunk.length
    buffer += chunk
    const lines = buffer.split("\n")
    buffer = lines.pop() ?? ""
    const parsed: Array<unknown> = []
    for (const line of lines) if (line !== "") parsed.push(JSON.parse(line))
    onLines(parsed)
  })
}

// Spawn the fake CLI as the SDKs do, send `initialize` and the prompt, and hand the lines of each
// stdout read, parsed, to `onLines`; shared by the raw consumer and the Effect floor so that they
// differ only in how messages are delivered and callbacks answered.
const spawnCli = (
  prompt: string,
  features: Features,
  handlers: {
    readonly onLines: (lines: ReadonlyArray<unknown>, cli: Cli) => void
    readonly onExit: (error: Error | undefined) => void
  }
): Cli => {
  const child = spawn(process.execPath, [CLI, ...CLI_ARGS], { stdio: ["pipe", "pipe", "inherit"] })
  const write = (value: unknown) => {
    child.stdin.write(JSON.stringify(value) + "\n")
  }
  const cli: Cli = {
    write,
    reply: (requestId, response) =>
      write({ type: "control_response", response: { subtype: "success", request_id: requestId, response } }),
    end: () => child.stdin.end(),
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill()
    }
  }
  readLines(child.stdout, (parsed) => handlers.onLines(parsed, cli))
  child.on("error", (e) => handlers.onExit(e))
  child.on("exit", (code) => handlers.onExit(code === 0 ? undefined : new Error(`fake CLI exited with ${code}`)))
  write({
    type: "control_request",
    request_id: "init_1",
    request: {
      subtype: "initialize",
      ...(features.hooks === true ? { hooks: { PreToolUse: [{ matcher: "Bash", hookCallbackIds: ["hook_0"] }] } } : {}),
      ...(features.mcp === true ? { sdkMcpServers: ["bench"] } : {})
    }
  })
  write({
    type: "user",
    message: { role: "user", content: [{ type: "text", text: prompt }] },
    parent_tool_use_id: null,
    session_id: ""
  })
  return cli
}

const delivered = (m: unknown, type: string): Delivered => ({
  type,
  subtype: text(field(m, "subtype")),
  result: type === "result" ? text(field(m, "result")) : undefined
})

// What a floor's consumer reads of a message its stream delivered (the floors route only messages
// with a string `type`).
const deliveredOf = (m: unknown): Delivered => delivered(m, text(field(m, "type")) ?? "")

// Raw Node: spawn, split("\n"), JSON.parse, answer control requests by hand. Untyped and
// unvalidated: what a program that needs none of an SDK's guarantees would write.
const rawQuery: RunQuery = (prompt, features, onMessage) =>
  new Promise((resolve, reject) => {
    spawnCli(prompt, features, {
      onLines: (lines, cli) => {
        for (const m of lines) {
          const type = field(m, "type")
          if (type === "control_request") {
            const request = field(m, "request")
            const subtype = field(request, "subtype")
            if (subtype === "hook_callback") cli.reply(field(m, "request_id"), hookAnswer)
            else if (subtype === "mcp_message") {
              const message = field(request, "message")
              cli.reply(field(m, "request_id"), mcpResponse(message, mcpResult(message)))
            }
            continue
          }
          if (type === "control_response" || typeof type !== "string") continue
          onMessage(delivered(m, type))
          if (type === "result") cli.end()
        }
      },
      onExit: (error) => (error === undefined ? resolve() : reject(error))
    })
  })

// The Effect floor's callback handling, shared by both floors: each hook_callback and MCP
// tools/call answered by an Effect callback run in its own fiber (`Runtime.runFork`) inside a span,
// the answer written from the fiber's observer; the MCP handshake as plain data.
const floorCallbacks = (
  { Effect, Exit, Runtime }: typeof import("effect"),
  runtime: RuntimeNs.Runtime<never>
): (m: unknown, cli: Cli) => void => {
  const runFork = Runtime.runFork(runtime)
  // The user's callbacks, as a library user writes them.
  const hook = (_input: unknown) => Effect.succeed(hookAnswer)
  const echo = (message: unknown) => Effect.succeed(echoResult(message))

  const answer = <A>(
    cli: Cli,
    requestId: unknown,
    effect: EffectNs.Effect<A>,
    name: string,
    encode: (a: A) => unknown
  ) => {
    const fiber = runFork(Effect.withSpan(effect, name, { captureStackTrace: false }))
    fiber.addObserver((exit) => {
      if (Exit.isSuccess(exit)) cli.reply(requestId, encode(exit.value))
      else {
        cli.write({
          type: "control_response",
          response: { subtype: "error", request_id: requestId, error: "callback failed" }
        })
      }
    })
  }

  return (m, cli) => {
    const requestId = field(m, "request_id")
    const request = field(m, "request")
    const subtype = field(request, "subtype")
    if (subtype === "hook_callback") {
      answer(cli, requestId, hook(field(request, "input")), "floor.hook", (a) => a)
    } else if (subtype === "mcp_message") {
      const message = field(request, "message")
      if (field(message, "method") === "tools/call") {
        answer(cli, requestId, echo(message), "floor.tools/call", (result) => mcpResponse(message, result))
      } else cli.reply(requestId, mcpResponse(message, mcpResult(message)))
    }
  }
}

// The Effect floor (issue #18's anchor): the least Effect code doing the library's job. The raw
// consumer's spawn and line split; messages delivered through `Stream.asyncPush` (one push per
// stdout read) and consumed with `Stream.runForEach`; each hook_callback and MCP tools/call
// answered by an Effect callback run in its own fiber (`Runtime.runFork`) inside a span, the
// answer written from the fiber's observer. No validation. `effect` is imported as the library
// contender imports it (timed the same way); the floor needs nothing of `@effect/platform-node`,
// so what the platform adds to import time and memory counts as the library's. `runtime` is for
// scripts/bench/floorSteps.ts (a runtime that counts steps); the bench uses the default one.
export const loadFloor = async (runtime?: RuntimeNs.Runtime<never>): Promise<RunQuery> => {
  const t0 = performance.now()
  const effect = await import("effect")
  const { Effect, Runtime, Stream } = effect
  imports.importMs = performance.now() - t0

  const runPromise = Runtime.runPromise(runtime ?? Runtime.defaultRuntime)
  const answer = floorCallbacks(effect, runtime ?? Runtime.defaultRuntime)

  // Control requests are answered here, on the reader's side; messages are batched per read and
  // delivered as parsed: the stream carries the messages themselves, as the library's and the
  // official SDK's do, and the consumer reads them (`deliveredOf`).
  const route = (lines: ReadonlyArray<unknown>, cli: Cli): Array<unknown> => {
    const out: Array<unknown> = []
    for (const m of lines) {
      const type = field(m, "type")
      if (type === "control_request") {
        answer(m, cli)
        continue
      }
      if (type === "control_response" || typeof type !== "string") continue
      out.push(m)
      if (type === "result") cli.end()
    }
    return out
  }

  return (prompt, features, onMessage) => {
    const messages = Stream.asyncPush<unknown, Error>(
      (emit) =>
        Effect.acquireRelease(
          Effect.sync(() =>
            spawnCli(prompt, features, {
              onLines: (lines, cli) => {
                const out = route(lines, cli)
                if (out.length > 0) emit.array(out)
              },
              onExit: (error) => (error === undefined ? emit.end() : emit.fail(error))
            })
          ),
          (cli) => Effect.sync(() => cli.kill())
        ),
      { bufferSize: "unbounded" }
    )
    return runPromise(Stream.runForEach(messages, (m) => Effect.sync(() => onMessage(deliveredOf(m)))))
  }
}

// The protocol floor (issue #18, eighth session): the Effect floor plus what the protocol and the
// library's guarantees require of every session, each in the least plain Effect (no Schema, nothing
// of the library), and nothing that is a library feature (typed messages, metrics, usage tally,
// version check, options, env merge, tracing through TRACEPARENT). The numbered comments are the
// items of docs/performance.md's "Set-up against a floor doing the same protocol work". Delivery
// and callbacks are the floor's. `runtime` as for `loadFloor`.
export const loadProtocolFloor = async (runtime?: RuntimeNs.Runtime<never>): Promise<RunQuery> => {
  const t0 = performance.now()
  const effect = await import("effect")
  const { Deferred, Effect, Exit, FiberId, Runtime, Stream } = effect
  imports.importMs = performance.now() - t0

  const runPromise = Runtime.runPromise(runtime ?? Runtime.defaultRuntime)
  const answerControl = floorCallbacks(effect, runtime ?? Runtime.defaultRuntime)
  const GRACE = "5 seconds"
  const CONTROL_DEADLINE = "60 seconds"
  const STDERR_TAIL = 8192

  // 1. The orphan guard's bookkeeping: the process groups of running CLIs, killed by a synchronous
  // hook if the host exits without closing its sessions (the hook is installed once).
  const live = new Set<number>()
  process.once("exit", () => {
    for (const pid of live) {
      try {
        process.kill(-pid, "SIGKILL")
      } catch {
        // already gone
      }
    }
  })
  let requestCount = 0

  interface ProtocolSession {
    readonly child: ChildProcessWithoutNullStreams
    readonly cli: Cli
    /** 2. Our requests awaiting the CLI's `control_response`, by request id. */
    readonly pending: Map<string, DeferredNs.Deferred<unknown, Error>>
    readonly idle: DeferredNs.Deferred<void>
    readonly exited: DeferredNs.Deferred<void>
    turn: TracerNs.Span | undefined
    /** The CLI's last `session_state_changed` state. */
    state: string | undefined
    result: boolean
    hasExited: boolean
    stderr: string
  }

  // 2. A control request with a fresh id, its reply awaited through the table.
  const request = (
    s: ProtocolSession,
    body: Readonly<Record<string, unknown>>
  ): DeferredNs.Deferred<unknown, Error> => {
    const requestId = `req_${++requestCount}_${Math.random().toString(36).slice(2, 10)}`
    const reply = Deferred.unsafeMake<unknown, Error>(FiberId.none)
    s.pending.set(requestId, reply)
    s.cli.write({ type: "control_request", request_id: requestId, request: body })
    return reply
  }

  const route = (s: ProtocolSession, m: unknown, out: Array<unknown>, clock: ClockNs.Clock): void => {
    const type = field(m, "type")
    if (type === "control_response") {
      // 2. A reply routed by its `request_id`.
      const response = field(m, "response")
      const requestId = field(response, "request_id")
      const reply = typeof requestId === "string" ? s.pending.get(requestId) : undefined
      if (reply === undefined || typeof requestId !== "string") return
      s.pending.delete(requestId)
      Deferred.unsafeDone(
        reply,
        field(response, "subtype") === "success"
          ? Exit.succeed(field(response, "response"))
          : Exit.fail(new Error(`control request failed: ${text(field(response, "error")) ?? "no reason"}`))
      )
    } else if (type === "control_request") {
      answerControl(m, s.cli)
    } else if (type === "system" && field(m, "subtype") === "session_state_changed") {
      // 4. The run state, for the close; host-only messages, not delivered (as the library does).
      s.state = text(field(m, "state"))
      if (s.state === "idle") Deferred.unsafeDone(s.idle, Exit.void)
    } else if (typeof type === "string") {
      out.push(m)
      if (type === "result") {
        s.result = true
        // 3. The turn ends at its result.
        s.turn?.end(clock.unsafeCurrentTimeNanos(), Exit.void)
      }
    }
  }

  const start = (features: Features, emit: EmitNs.EmitOpsPush<Error, unknown>, clock: ClockNs.Clock) => {
    // 1. As the library spawns: every pipe ours, the CLI in a process group of its own (what it
    // starts goes with it), and asked for `session_state_changed` (4.), as both SDKs ask.
    const child = spawn(process.execPath, [CLI, ...CLI_ARGS], {
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
      env: { ...process.env, CLAUDE_CODE_SDK_READS_SESSION_STATE: "1" }
    })
    const write = (value: unknown) => {
      child.stdin.write(JSON.stringify(value) + "\n")
    }
    const s: ProtocolSession = {
      child,
      cli: {
        write,
        reply: (requestId, response) =>
          write({ type: "control_response", response: { subtype: "success", request_id: requestId, response } }),
        end: () => child.stdin.end(),
        // The close below stops the process; nothing else does.
        kill: () => {}
      },
      pending: new Map(),
      idle: Deferred.unsafeMake<void>(FiberId.none),
      exited: Deferred.unsafeMake<void>(FiberId.none),
      turn: undefined,
      state: undefined,
      result: false,
      hasExited: false,
      stderr: ""
    }
    const pid = child.pid
    if (pid !== undefined) live.add(pid)
    // A write to a CLI that has gone fails with EPIPE: its exit tells the stream why.
    child.stdin.on("error", () => {})
    // 1. stderr drained (a CLI blocked on a full stderr pipe stops writing stdout), its tail kept
    // for the error of a CLI that ends without a result.
    child.stderr.setEncoding("utf8")
    child.stderr.on("data", (chunk: string) => {
      s.stderr = (s.stderr + chunk).slice(-STDERR_TAIL)
    })
    readLines(child.stdout, (parsed) => {
      const out: Array<unknown> = []
      for (const m of parsed) route(s, m, out, clock)
      if (out.length > 0) emit.array(out)
      // The query's stream ends at its result, as the library's does; the close follows.
      if (s.result) emit.end()
    })
    const exited = () => {
      if (s.hasExited) return
      s.hasExited = true
      if (pid !== undefined) live.delete(pid)
      Deferred.unsafeDone(s.exited, Exit.void)
    }
    // Once stdout is read to its end (the exit may come before the last reads): requests the CLI
    // will never answer fail (2.), and so does a query whose result never came.
    const ended = (error: Error) => {
      exited()
      for (const reply of s.pending.values()) Deferred.unsafeDone(reply, Exit.fail(error))
      s.pending.clear()
      if (!s.result) emit.fail(error)
    }
    child.once("error", ended)
    child.once("exit", exited)
    child.once(
      "close",
      (code: number | null, signal: NodeJS.Signals | null) =>
        ended(
          new Error(`fake CLI exited (${code ?? signal}) before its result${s.stderr === "" ? "" : `: ${s.stderr}`}`)
        )
    )
    // 2. `initialize` through the request table; the prompt is written without waiting for its
    // reply, as the library writes it. 3. The turn's span is the session's child.
    const initialized = request(s, {
      subtype: "initialize",
      ...(features.hooks === true ? { hooks: { PreToolUse: [{ matcher: "Bash", hookCallbackIds: ["hook_0"] }] } } : {}),
      ...(features.mcp === true ? { sdkMcpServers: ["bench"] } : {})
    })
    return { s, initialized }
  }

  // 2. The reply awaited within the control deadline; its `response` must be an object.
  const awaitInitialize = (initialized: DeferredNs.Deferred<unknown, Error>) =>
    Deferred.await(initialized).pipe(
      Effect.timeoutFail({
        duration: CONTROL_DEADLINE,
        onTimeout: () => new Error(`initialize: no reply within ${CONTROL_DEADLINE}`)
      }),
      Effect.flatMap((response) =>
        typeof response === "object" && response !== null
          ? Effect.void
          : Effect.fail(new Error("initialize: the reply's response is not an object"))
      )
    )

  // The waits of the close run in a finalizer (uninterruptible): `Effect.timeout` can only stop a
  // wait that is interruptible.
  const bounded = <A, E>(wait: EffectNs.Effect<A, E>) => Effect.timeout(Effect.interruptible(wait), GRACE)

  // 4. The close on the usual path, as the library's: after the result, wait (bounded) for the CLI
  // to report `idle` unless it already has or never reports states (callbacks may still come and
  // need stdin), then end stdin, then wait (bounded) for the exit, SIGTERM to the group past it.
  // (An `initialize` never answered, or a turn still running, would be stopped at once or sent
  // `interrupt` first: not the bench's path.)
  const close = (s: ProtocolSession, clock: ClockNs.Clock) =>
    Effect.suspend(() => {
      if (s.turn !== undefined && s.turn.status._tag === "Started") {
        s.turn.end(clock.unsafeCurrentTimeNanos(), Exit.fail("closed before its result"))
      }
      if (s.hasExited) return Effect.void
      const idle = s.state === undefined || s.state === "idle"
        ? Effect.void
        : Effect.ignore(bounded(Deferred.await(s.idle)))
      return idle.pipe(
        Effect.zipRight(Effect.sync(() => s.cli.end())),
        Effect.zipRight(bounded(Deferred.await(s.exited))),
        Effect.catchAll(() =>
          Effect.sync(() => {
            const pid = s.child.pid
            if (!s.hasExited && pid !== undefined) {
              try {
                process.kill(-pid, "SIGTERM")
              } catch {
                // already gone
              }
            }
          })
        )
      )
    })

  const userMessage = (prompt: string) => ({
    type: "user",
    message: { role: "user", content: [{ type: "text", text: prompt }] },
    parent_tool_use_id: null,
    session_id: ""
  })

  return (prompt, features, onMessage) => {
    const messages = Stream.asyncPush<unknown, Error>(
      (emit) =>
        Effect.clockWith((clock) =>
          Effect.acquireRelease(
            Effect.sync(() => start(features, emit, clock)),
            ({ s }) => close(s, clock)
          ).pipe(
            Effect.flatMap(({ initialized, s }) =>
              Effect.flatMap(
                Effect.makeSpan("protocolFloor.turn", { captureStackTrace: false }),
                (turn) => {
                  s.turn = turn
                  s.cli.write(userMessage(prompt))
                  return awaitInitialize(initialized)
                }
              )
            )
          )
        ),
      { bufferSize: "unbounded" }
    )
    // 3. One span per session, the turn's parent.
    return runPromise(
      Stream.runForEach(messages, (m) => Effect.sync(() => onMessage(deliveredOf(m)))).pipe(
        Effect.withSpan("protocolFloor.session", { captureStackTrace: false })
      )
    )
  }
}

// ---------------------------------------------------------------------------------------------
// measurement

// Taken when the contender is loaded: the import's duration, and the process's RSS right after it
// (for the raw consumer, which imports nothing, the RSS of the bare worker).
const imports: { importMs?: number; ownImportMs?: number; ownImportCpuMs?: number; rssMb?: number } = {}
const rawChunks = { count: 0, bytes: 0 }

// The smallest import a user of `ClaudeAgent.query` needs, `effect-claude-agent/ClaudeAgent`
// (dist/esm/ClaudeAgent.js beside the barrel), timed like the barrel's own import but in a fresh
// process of its own: this one has loaded the barrel already. Only for a built library.
const subpathImport = (): { readonly wall: number; readonly cpu: number } | undefined => {
  if (libraryUrl === undefined || !libraryUrl.endsWith("/dist/esm/index.js")) return undefined
  const script = [
    "const { performance } = await import(\"node:perf_hooks\")",
    "await import(\"effect\")",
    "await import(\"@effect/platform-node/NodeContext\")",
    "const cpu = process.cpuUsage()",
    "const t = performance.now()",
    `await import(${JSON.stringify(new URL("ClaudeAgent.js", libraryUrl).href)})`,
    "const wall = performance.now() - t",
    "const used = process.cpuUsage(cpu)",
    "process.stdout.write(JSON.stringify({ wall, cpu: (used.user + used.system) / 1000 }))"
  ].join("\n")
  // Run from the checkout, so `effect` resolves to the packages the library itself imports.
  const cwd = new URL("../../", libraryUrl)
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd, encoding: "utf8" })
  const sample: { wall: number; cpu: number } = JSON.parse(out)
  return sample
}

const cpuUs = (): number => {
  const u = process.cpuUsage()
  return u.user + u.system
}

// Peak RSS over a run: Linux keeps a high-water mark that /proc/self/clear_refs resets, which
// sees every peak; elsewhere, sample every 5 ms (and miss what happens between samples).
const rssPeak = (): { readonly stop: () => number } => {
  const statusKb = (field: string): number | undefined => {
    try {
      const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync("/proc/self/status", "utf8"))
      return m?.[1] === undefined ? undefined : Number(m[1]) * 1024
    } catch {
      return undefined
    }
  }
  try {
    writeFileSync("/proc/self/clear_refs", "5")
    const base = statusKb("VmRSS")
    if (base !== undefined) return { stop: () => ((statusKb("VmHWM") ?? base) - base) / 2 ** 20 }
  } catch {
    // fall through to sampling
  }
  const base = process.memoryUsage.rss()
  let peak = base
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss())
  }, 5)
  return {
    stop: () => {
      clearInterval(timer)
      return (Math.max(peak, process.memoryUsage.rss()) - base) / 2 ** 20
    }
  }
}

const prompt = (spec: Readonly<Record<string, unknown>>): string => `bench ${JSON.stringify(spec)}`

interface Turn {
  readonly initAt: number
  readonly initCpu: number
  readonly endAt: number
  readonly endCpu: number
  readonly firstAt: number
  readonly assistants: number
  readonly lastAssistantAt: number
  readonly stats: Readonly<Record<string, unknown>>
}

// One query with timestamps at system/init, each assistant message and the result.
const turn = async (run: RunQuery, spec: Readonly<Record<string, unknown>>, features: Features = {}): Promise<Turn> => {
  let initAt = Number.NaN
  let initCpu = Number.NaN
  let endAt = Number.NaN
  let endCpu = Number.NaN
  let firstAt = Number.NaN
  let assistants = 0
  let lastAssistantAt = Number.NaN
  let stats: Record<string, unknown> = {}
  await run(prompt(spec), features, (m) => {
    const now = performance.now()
    if (Number.isNaN(firstAt)) firstAt = now
    if (m.type === "assistant") {
      assistants++
      lastAssistantAt = now
    } else if (m.type === "system" && m.subtype === "init") {
      initAt = now
      initCpu = cpuUs()
    } else if (m.type === "result") {
      endAt = now
      endCpu = cpuUs()
      const parsed: unknown = JSON.parse(m.result ?? "{}")
      if (typeof parsed === "object" && parsed !== null) stats = { ...parsed }
    }
  })
  if (Number.isNaN(endAt)) throw new Error("no result message")
  if (typeof stats.errors === "number" && stats.errors > 0) {
    throw new Error(`the fake CLI got ${stats.errors} bad replies`)
  }
  return { initAt, initCpu, endAt, endCpu, firstAt, assistants, lastAssistantAt, stats }
}

const expect = (what: string, got: number, want: number): void => {
  if (got !== want) throw new Error(`${what}: expected ${want}, got ${got}`)
}
const num = (value: unknown): number => (typeof value === "number" ? value : Number.NaN)

const runJob = async (run: RunQuery, job: Job): Promise<Sample> => {
  const s = sizes(job.scale)
  switch (job.workload) {
    case "flood1k":
    case "chunked4k": {
      const spec = { kind: "flood", ...s.flood1k, ...(job.workload === "chunked4k" ? { chunk: 4096 } : {}) }
      const chunksBefore = { ...rawChunks }
      const rss = job.mode === "cold" ? rssPeak() : undefined
      const t = await turn(run, spec)
      const rssGrowthMb = rss?.stop()
      expect("assistant messages", t.assistants, spec.count)
      const sec = (t.endAt - t.initAt) / 1000
      const chunks = rawChunks.count - chunksBefore.count
      return {
        msgsPerSec: spec.count / sec,
        cpuUsPerMsg: (t.endCpu - t.initCpu) / spec.count,
        ...(rssGrowthMb === undefined ? {} : { rssGrowthMb }),
        ...(chunks > 0 ? { meanChunkBytes: (rawChunks.bytes - chunksBefore.bytes) / chunks } : {})
      }
    }
    case "flood100k": {
      const spec = { kind: "flood", ...s.flood100k }
      const t = await turn(run, spec)
      expect("assistant messages", t.assistants, spec.count)
      const mb = (spec.count * spec.size) / 1e6
      return { mbPerSec: mb / ((t.endAt - t.initAt) / 1000), cpuMsPerMb: (t.endCpu - t.initCpu) / 1000 / mb }
    }
    case "line900k": {
      const spec = { kind: "flood", ...s.line900k }
      const t = await turn(run, spec)
      expect("assistant messages", t.assistants, 1)
      return { deliveredMs: t.lastAssistantAt - t.initAt }
    }
    case "hooks":
    case "hooks10k": {
      const spec = job.workload === "hooks" ? { kind: "hooks", ...s.hooks } : { kind: "hooks", ...s.hooks10k }
      const t = await turn(run, spec, { hooks: true })
      expect("hook round trips", num(t.stats.count), spec.count)
      return {
        p50Us: num(t.stats.p50) * 1000,
        p90Us: num(t.stats.p90) * 1000,
        rtPerSec: num(t.stats.perSecond),
        cpuUsPerRt: (t.endCpu - t.initCpu) / spec.count,
        // How many reads the CLI needed per reply: ~1 means one write per answer.
        cliReadsPerRt: num(t.stats.stdinReads) / spec.count
      }
    }
    case "mcp": {
      const spec = { kind: "mcp", ...s.mcp }
      const t = await turn(run, spec, { mcp: true })
      expect("tools/call round trips", num(t.stats.count), spec.count)
      return {
        p50Us: num(t.stats.p50) * 1000,
        p90Us: num(t.stats.p90) * 1000,
        rtPerSec: num(t.stats.perSecond),
        cpuUsPerRt: (t.endCpu - t.initCpu) / spec.count,
        // How many reads the CLI needed per reply: ~1 means one write per answer.
        cliReadsPerRt: num(t.stats.stdinReads) / spec.count
      }
    }
    case "setup": {
      const n = s.setup.sessions
      const cpu0 = cpuUs()
      const t0 = performance.now()
      for (let i = 0; i < n; i++) {
        const t = await turn(run, { kind: "echo" })
        expect("assistant messages", t.assistants, 1)
      }
      return { cpuMsPerSession: (cpuUs() - cpu0) / 1000 / n, wallMsPerSession: (performance.now() - t0) / n }
    }
    case "firstQuery": {
      const t0 = performance.now()
      const t = await turn(run, { kind: "echo" })
      const subpath = contenderArg === "library" || contenderArg === "baseline" ? subpathImport() : undefined
      return {
        firstMessageMs: t.firstAt - t0,
        ...(imports.importMs === undefined ? {} : { importMs: imports.importMs }),
        ...(imports.rssMb === undefined ? {} : { importRssMb: imports.rssMb }),
        ...(imports.ownImportMs === undefined ? {} : { ownImportMs: imports.ownImportMs }),
        ...(imports.ownImportCpuMs === undefined ? {} : { ownImportCpuMs: imports.ownImportCpuMs }),
        ...(subpath === undefined ? {} : { ownSubpathImportMs: subpath.wall, ownSubpathImportCpuMs: subpath.cpu })
      }
    }
    case "concurrent": {
      const spec = { kind: "flood", count: s.concurrent.count, size: s.concurrent.size }
      const t0 = performance.now()
      const turns = await Promise.all(Array.from({ length: s.concurrent.sessions }, () => turn(run, spec)))
      const wallMs = performance.now() - t0
      const total = turns.reduce((sum, t) => sum + t.assistants, 0)
      expect("assistant messages", total, s.concurrent.sessions * spec.count)
      return { wallMs, msgsPerSec: total / (wallMs / 1000) }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// main: import on the first job (so a cold process's import is timed), then serve jobs.

// With BENCH_CPU_PROF_DIR (run.ts --cpu-prof=DIR) each job is profiled on its own, from the
// job's start to its end (imports and the IPC in between stay out): one .cpuprofile per job.
const profileDir = process.env.BENCH_CPU_PROF_DIR
let profiled = 0
const profiling = async <A>(name: string, body: () => Promise<A>): Promise<A> => {
  if (profileDir === undefined) return body()
  const session = new Session()
  session.connect()
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) =>
      session.post(method, params, (error, result) => (error === null ? resolve(result) : reject(error)))
    )
  await post("Profiler.enable")
  await post("Profiler.setSamplingInterval", { interval: 100 })
  await post("Profiler.start")
  try {
    return await body()
  } finally {
    const result = await post("Profiler.stop")
    const profile = typeof result === "object" && result !== null ? Reflect.get(result, "profile") : undefined
    mkdirSync(profileDir, { recursive: true })
    writeFileSync(
      join(profileDir, `${name}-${process.pid}-${String(profiled++).padStart(2, "0")}.cpuprofile`),
      JSON.stringify(profile)
    )
    session.disconnect()
  }
}

const isContender = (value: string | undefined): value is Contender =>
  value === "library" || value === "floor" || value === "protocolFloor" || value === "official" || value === "raw" ||
  value === "baseline"

const main = async (): Promise<void> => {
  const contender = contenderArg
  if (!isContender(contender) || libraryUrl === undefined || CLI === "") {
    throw new Error(
      "usage: worker <library|floor|protocolFloor|official|raw|baseline> <library module URL> <fake CLI path>"
    )
  }
  let run: RunQuery | undefined
  const load = async (): Promise<RunQuery> => {
    const loaded = contender === "library" || contender === "baseline"
      ? await loadLibrary(libraryUrl ?? "")
      : contender === "floor"
      ? await loadFloor()
      : contender === "protocolFloor"
      ? await loadProtocolFloor()
      : contender === "official"
      ? await loadOfficial()
      : rawQuery
    imports.rssMb = process.memoryUsage.rss() / 2 ** 20
    return loaded
  }
  process.on("message", (message: ToWorker) => {
    void (async () => {
      try {
        run ??= await load()
        const job = message.job
        const loaded = run
        const sample = await profiling(`${contender}-${job.workload}-${job.mode}`, () => runJob(loaded, job))
        send({ type: "result", sample })
      } catch (e) {
        send({ type: "error", message: e instanceof Error ? e.stack ?? e.message : String(e) })
      }
    })()
  })
  process.on("disconnect", () => process.exit(0))
  send({ type: "ready" })
}

// A worker is forked by run.ts with an IPC channel; imported by another script, it serves nothing.
if (process.send !== undefined) {
  main().catch((e: unknown) => {
    send({ type: "error", message: e instanceof Error ? e.stack ?? e.message : String(e) })
    process.exit(1)
  })
}
