// Callback round trips in one process, the control channel against the Effect floor's code, with
// no subprocess and no pipe: the bytes of each request are pushed into the transport's stdout
// reader from a macrotask (`setImmediate`, where a pipe's data event would come from), and each
// answer, once encoded, schedules the next request. What is left is the library's own CPU per
// round trip from bytes in to the answer's line out, next to the floor's (split, `JSON.parse`,
// `Runtime.runFork(withSpan(callback))`, `JSON.stringify` from the fiber's observer).
//
//   npx tsx scripts/bench/callbacks.ts [--root=DIR] [--baseline=DIR] [--kind=hooks|mcp] [--count=20000] [--reps=7]
//     [--only=library,session,floor] [--steps[=top]] [--heap[=top] [--survivors] [--heap-out=PREFIX]] [--cold
//     [--cpu-prof=PREFIX] [--mark] [--buckets]] [--compiled] [--each]
//
// --root=DIR runs another checkout's src/ instead of this one's; --baseline=DIR runs another
// checkout's src/ as well, in the same process, its runs alternated with this one's (A/B in one
// sitting, the machine's load hitting both alike).
//
// --compiled takes --root and --baseline as tsc's output for a checkout's src/ (e.g. `tsc -p
// tsconfig.build.json --outDir DIR`, with node_modules reachable from DIR) rather than its
// sources through tsx, whose transform wraps every function made at run time in a `__name` call
// (esbuild's keepNames), a cost per closure that the published build does not have.
//
// --each prints every run's figure in the order run, the warm-up's first: how many runs of --count
// round trips (each a new channel or session, as each of the bench's repetitions is a new session)
// a process takes to settle, e.g. `--count=2000 --reps=9 --only=session`.
//
// --steps counts instead of timing: a `Supervisor` with `RuntimeFlags.OpSupervision` (as
// scripts/bench/steps.ts does for sessions) counts the runtime steps and the fibers started per
// round trip, every fiber included (the answers' fibers start from `Runtime.defaultRuntime`'s
// flags, which this mode turns the flag on in); --steps=N also lists the N most frequent steps
// per round trip, by opcode and the name of the function it runs.
//
// --heap samples allocations instead (V8's sampling heap profiler through `node:inspector`, objects
// a young collection freed included) over one warm run per contender, and prints the bytes
// allocated per round trip, with --heap=N the N functions that allocated most (file:line of the
// code run; through tsx the line is the transformed code's). --survivors leaves out what a young
// collection freed: what is left is what reached the old generation, promoted or pretenured (plus
// the little still young at the end), by where it was allocated. --heap-out=PREFIX also writes each
// contender's profile (PREFIX.N.heapprofile, for a viewer or a script). As a diagnostic,
// `node --trace-gc-nvp` gives the bytes promoted per young collection and the pauses.
import { readFileSync, writeFileSync } from "node:fs"
import { Session } from "node:inspector/promises"
import { join, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import {
  Context,
  Effect,
  Exit,
  FiberId,
  FiberRef,
  FiberRefs,
  Layer,
  Option,
  Runtime,
  RuntimeFlags,
  RuntimeFlagsPatch,
  Schema,
  Stream,
  Supervisor
} from "effect"

const option = (name: string): string | undefined =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3)
const root = resolve(option("root") ?? ".")
const baseline = option("baseline")
const kind = option("kind") ?? "hooks"
const count = Number(option("count") ?? 20_000)
const reps = Number(option("reps") ?? 7)
const only = option("only")?.split(",")
const stepsOption = process.argv.find((a) => a === "--steps" || a.startsWith("--steps="))
const top = stepsOption === undefined ? 0 : Number(stepsOption.slice(8) || 0)
const counting = stepsOption !== undefined
const heapOption = process.argv.find((a) => a === "--heap" || a.startsWith("--heap="))
const heapTop = heapOption === undefined ? 0 : Number(heapOption.slice(7) || 0)

const compiled = process.argv.includes("--compiled")
const loader = (root: string) => async <A>(path: string): Promise<A> =>
  await import(pathToFileURL(compiled ? join(root, path.replace(/\.ts$/, ".js")) : join(root, "src", path)).href)

const frames: {
  readonly preToolUseInput: Record<string, unknown>
  readonly initializeResponse: Record<string, unknown>
  readonly systemInit: Record<string, unknown>
  readonly result: Record<string, unknown>
} = JSON.parse(
  readFileSync(join(import.meta.dirname, "..", "fixtures", "bench-frames.json"), "utf8")
)
const encoder = new TextEncoder()
// The requests as the bench's fake CLI writes them, each its own bytes.
const requestBytes = (i: number): Uint8Array => {
  const toolUseId = `toolu_${i}`
  const request = kind === "hooks"
    ? {
      subtype: "hook_callback",
      callback_id: "hook_0",
      input: { ...frames.preToolUseInput, tool_use_id: toolUseId },
      tool_use_id: toolUseId
    }
    : {
      subtype: "mcp_message",
      server_name: "bench",
      message: {
        method: "tools/call",
        params: { name: "echo", arguments: { text: `hello ${i}` }, _meta: { "claudecode/toolUseId": toolUseId } },
        jsonrpc: "2.0",
        id: i + 2
      }
    }
  return encoder.encode(JSON.stringify({ type: "control_request", request_id: `cli_${i}`, request }) + "\n")
}
const lines = Array.from({ length: count }, (_, i) => requestBytes(i))

// What a step is, for --steps=N: its opcode and the name of the function it runs, if any.
const stepName = (effect: any): string => {
  const op = String(effect?._op ?? "?")
  const f = [effect?.effect_instruction_i0, effect?.effect_instruction_i1, effect?.effect_instruction_i2]
    .find((x) => typeof x === "function")
  return f === undefined ? op : `${op} ${f.name || "(anonymous)"}`
}

class Counter extends Supervisor.AbstractSupervisor<void> {
  fibers = 0
  steps = 0
  // Steps in fibers started with no parent (`Runtime.runFork`: the answers') since `fresh` was
  // last replaced, apart.
  freshSteps = 0
  fresh = new WeakSet<object>()
  readonly names = new Map<string, number>()
  get value() {
    return Effect.void
  }
  override onStart(_context: unknown, _effect: unknown, parent: Option.Option<unknown>, fiber: object) {
    this.fibers++
    if (Option.isNone(parent)) this.fresh.add(fiber)
  }
  override onEffect(fiber: object, effect: unknown) {
    this.steps++
    if (this.fresh.has(fiber)) this.freshSteps++
    if (top > 0) {
      const name = `${this.fresh.has(fiber) ? "answer" : "other "}  ${stepName(effect)}`
      this.names.set(name, (this.names.get(name) ?? 0) + 1)
    }
  }
}
const counter = new Counter()
if (counting) {
  // The answers' fibers (library and floor) start with the default runtime's flags.
  const defaultRuntime: { runtimeFlags: RuntimeFlags.RuntimeFlags } = Runtime.defaultRuntime
  defaultRuntime.runtimeFlags = RuntimeFlags.enable(defaultRuntime.runtimeFlags, RuntimeFlags.OpSupervision)
}
// A program under the counter (when counting).
const supervised = <A, E>(self: Effect.Effect<A, E>): Effect.Effect<A, E> =>
  counting
    ? self.pipe(
      Effect.supervised(counter),
      Effect.withRuntimeFlagsPatch(RuntimeFlagsPatch.enable(RuntimeFlags.OpSupervision))
    )
    : self

// --cold --buckets: the CPU of each round trip's end, read back by bucket (the first, the next
// nine, …) to tell the work done once on the first requests from what each costs while cold.
const buckets = process.argv.includes("--buckets")
const ends: Array<number> = []
// With --mark, a line at these round trips, for `node --trace-opt`'s output.
const marked = process.argv.includes("--mark") ? new Set([100, 500, 1000, 2000, 5000]) : undefined
const roundTrip = (i: number) => {
  if (buckets) ends.push(cpu())
  if (marked?.has(i)) console.log(`=== round trip ${i}`)
}

// CPU µs, or with --steps the steps counted (the fibers are read apart).
const cpu = (): number => {
  if (counting) return counter.steps
  const u = process.cpuUsage()
  return u.user + u.system
}

const hookAnswer = {
  hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow", permissionDecisionReason: "bench" }
} as const

// One run: `count` round trips, one after the other; resolves with CPU µs per round trip.
type Run = () => Promise<number>

// The hook answer and the `echo` tool's server every library run serves, from one checkout.
const callbacksOf = async (load: ReturnType<typeof loader>) => {
  const Hook = await load<typeof import("../../src/Hook.js")>("Hook.ts")
  const Tool = await load<typeof import("../../src/Tool.js")>("Tool.ts")
  const McpServer = await load<typeof import("../../src/McpServer.js")>("McpServer.ts")
  const allow = Hook.allow("bench")
  const echo = Tool.make("echo", {
    description: "Echoes its input",
    parameters: Schema.Struct({ text: Schema.String }),
    handler: ({ text }) => Effect.succeed(Tool.text(text))
  })
  const server = McpServer.make({ name: "bench", version: "1.0.0", tools: [echo] })
  return { allow, server }
}

const library = async (root: string): Promise<Run> => {
  const load = loader(root)
  const { ControlChannel } = await load<typeof import("../../src/services/ControlChannel.js")>(
    "services/ControlChannel.ts"
  )
  const { Transport } = await load<typeof import("../../src/services/Transport.js")>("services/Transport.ts")
  const { StdoutFrames } = await load<typeof import("../../src/internal/process/stdout.js")>(
    "internal/process/stdout.ts"
  )
  const HookRegistry = await load<typeof import("../../src/services/HookRegistry.js")>("services/HookRegistry.ts")
  const McpBridge = await load<typeof import("../../src/services/McpBridge.js")>("services/McpBridge.ts")
  const { allow, server } = await callbacksOf(load)
  const Control = await load<typeof import("../../src/schema/Control.js")>("schema/Control.ts")

  return () =>
    new Promise<number>((done) => {
      const stdout = new StdoutFrames(1024 * 1024)
      let i = 0
      let start = 0
      const transport = {
        send: (frame: unknown) =>
          Effect.sync(() => {
            JSON.stringify(frame)
            roundTrip(i + 1)
            if (++i < count) setImmediate(() => stdout.onData(lines[i]!))
            else done((cpu() - start) / count)
          }),
        frames: stdout.stream,
        endInput: Effect.void,
        terminate: Effect.void,
        exitStatus: Effect.never,
        stderrTail: Effect.succeed(""),
        stderr: Stream.empty,
        pid: Option.none()
      }
      const program = Effect.gen(function*() {
        const channel = yield* ControlChannel.make({})
        const hooks = yield* HookRegistry.make({
          PreToolUse: [{ matcher: "Bash", hooks: [() => Effect.succeed(allow)] }]
        })
        const bridge = yield* McpBridge.make([server])
        yield* channel.handle(Control.HookCallback, hooks.handleCallback)
        yield* channel.handle(Control.McpMessage, bridge.handleMessage)
        start = cpu()
        yield* Effect.sync(() => stdout.onData(lines[0]!))
        return yield* Effect.never
      })
      Effect.runFork(supervised(Effect.scoped(program.pipe(Effect.provide(Layer.succeed(Transport, transport))))))
    })
}

// The whole session (`ClaudeAgent.query`) over a transport that plays the CLI in memory: the
// `initialize` reply, then `count` requests in the turn, each sent when the previous one's
// answer is written, then the result and `idle`.
const session = async (root: string): Promise<Run> => {
  const load = loader(root)
  const ClaudeAgent = await load<typeof import("../../src/ClaudeAgent.js")>("ClaudeAgent.ts")
  const { Transport } = await load<typeof import("../../src/services/Transport.js")>("services/Transport.ts")
  const { StdoutFrames } = await load<typeof import("../../src/internal/process/stdout.js")>(
    "internal/process/stdout.ts"
  )
  const { allow, server } = await callbacksOf(load)
  const line = (frame: unknown) => encoder.encode(JSON.stringify(frame) + "\n")
  const sessionId = frames.systemInit.session_id
  const state = (s: string) =>
    line({ type: "system", subtype: "session_state_changed", state: s, sdk_host_only: true, session_id: sessionId })

  return () =>
    new Promise<number>((done, fail) => {
      const stdout = new StdoutFrames(1024 * 1024)
      let exited: (() => void) | undefined
      let i = -1
      let start = 0
      let cpuPerRoundTrip = 0
      const later = (bytes: Uint8Array) => setImmediate(() => stdout.onData(bytes))
      const transport = {
        send: (frame: any) =>
          Effect.sync(() => {
            JSON.stringify(frame)
            if (frame.type === "control_request") {
              const response = frame.request.subtype === "initialize" ? frames.initializeResponse : {}
              later(
                line({
                  type: "control_response",
                  response: { subtype: "success", request_id: frame.request_id, response }
                })
              )
            } else if (frame.type === "user") {
              stdout.onData(state("running"))
              stdout.onData(line(frames.systemInit))
              i = 0
              start = cpu()
              later(lines[0]!)
            } else if (frame.type === "control_response" && i >= 0) {
              if (++i < count) later(lines[i]!)
              else {
                cpuPerRoundTrip = (cpu() - start) / count
                stdout.onData(line({ ...frames.result, result: "done" }))
                later(state("idle"))
              }
            }
          }),
        frames: stdout.stream,
        endInput: Effect.sync(() => {
          stdout.onEnd()
          exited?.()
        }),
        terminate: Effect.sync(() => stdout.onEnd()),
        exitStatus: Effect.async<{ exitCode: number | undefined; signal: string | undefined }>((resume) => {
          exited = () => resume(Effect.succeed({ exitCode: 0, signal: undefined }))
        }),
        stderrTail: Effect.succeed(""),
        stderr: Stream.empty,
        pid: Option.none()
      }
      const agent = ClaudeAgent.make({ transport: Layer.succeed(Transport, transport) })
      const program = ClaudeAgent.query("bench", {
        ...(kind === "hooks"
          ? { hooks: { PreToolUse: [{ matcher: "Bash", hooks: [() => Effect.succeed(allow)] }] } }
          : { mcpServers: { bench: server } })
      }).pipe(Stream.runDrain, Effect.provideService(ClaudeAgent.ClaudeAgent, agent))
      Effect.runPromise(supervised(program)).then(() => done(cpuPerRoundTrip), fail)
    })
}

const floor = async (): Promise<Run> => {
  const runFork = Runtime.runFork(
    counting
      ? Runtime.make({
        context: Context.empty(),
        fiberRefs: FiberRefs.updateAs(FiberRefs.empty(), {
          fiberId: FiberId.none,
          fiberRef: FiberRef.currentSupervisor,
          value: counter
        }),
        runtimeFlags: Runtime.defaultRuntime.runtimeFlags
      })
      : Runtime.defaultRuntime
  )
  const hook = (_input: unknown) => Effect.succeed(hookAnswer)
  const echo = (message: any) => Effect.succeed({ content: [{ type: "text", text: message.params.arguments.text }] })
  const decoder = new TextDecoder()
  return () =>
    new Promise<number>((done) => {
      let i = 0
      let buffer = ""
      const start = cpu()
      const write = (value: unknown) => {
        JSON.stringify(value)
        roundTrip(i + 1)
        if (++i < count) setImmediate(() => onData(lines[i]!))
        else done((cpu() - start) / count)
      }
      const reply = (requestId: unknown, response: unknown) =>
        write({ type: "control_response", response: { subtype: "success", request_id: requestId, response } })
      const answer = <A>(requestId: unknown, effect: Effect.Effect<A>, name: string, encode: (a: A) => unknown) => {
        const fiber = runFork(Effect.withSpan(effect, name, { captureStackTrace: false }))
        fiber.addObserver((exit) => {
          if (Exit.isSuccess(exit)) reply(requestId, encode(exit.value))
        })
      }
      const onData = (chunk: Uint8Array) => {
        buffer += decoder.decode(chunk)
        const parts = buffer.split("\n")
        buffer = parts.pop() ?? ""
        for (const line of parts) {
          if (line === "") continue
          const m = JSON.parse(line)
          if (m.type !== "control_request") continue
          const request = m.request
          if (request.subtype === "hook_callback") answer(m.request_id, hook(request.input), "floor.hook", (a) => a)
          else if (request.subtype === "mcp_message") {
            const message = request.message
            answer(m.request_id, echo(message), "floor.tools/call", (result) => ({
              mcp_response: { jsonrpc: "2.0", id: message.id, result }
            }))
          }
        }
      }
      onData(lines[0]!)
    })
}

const median = (xs: ReadonlyArray<number>): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!
const contenders: Array<[string, Run]> = []
const roots = baseline === undefined ? [root] : [root, resolve(baseline)]
for (const dir of roots) {
  if (only === undefined || only.includes("library")) contenders.push([`channel (${dir})`, await library(dir)])
  if (only === undefined || only.includes("session")) contenders.push([`session (${dir})`, await session(dir)])
}
if (only === undefined || only.includes("floor")) contenders.push(["floor", await floor()])
const samples = new Map<string, Array<number>>(contenders.map(([name]) => [name, []]))
// --cold: the first run of each contender only, no warm-up (run one contender per process, e.g.
// `--only=floor --cold`, to measure a fresh process's first `--count` round trips).
// With --cpu-prof=PREFIX, each cold run's main-thread CPU profile (V8's profiler through
// `node:inspector`, started after the imports and the set-up) goes to PREFIX.N.cpuprofile, for
// scripts/bench/profile.ts.
if (process.argv.includes("--cold")) {
  const profileTo = option("cpu-prof")
  const inspector = profileTo === undefined ? undefined : new Session()
  inspector?.connect()
  for (const [index, [name, run]] of contenders.entries()) {
    if (inspector !== undefined) {
      await inspector.post("Profiler.enable")
      await inspector.post("Profiler.setSamplingInterval", { interval: 100 })
      await inspector.post("Profiler.start")
    }
    // --mark: a line before the run, to find where it starts in `node --trace-opt`'s output.
    if (process.argv.includes("--mark")) console.log(`=== cold run of ${name} starts`)
    const perRoundTrip = await run()
    if (inspector !== undefined) {
      const { profile } = await inspector.post("Profiler.stop")
      writeFileSync(`${profileTo}.${index}.cpuprofile`, JSON.stringify(profile))
    }
    console.log(`${kind} ${name}: ${perRoundTrip.toFixed(1)} CPU µs per round trip, cold`)
    if (buckets) {
      const edges = [1, 10, 100, 500, 1000, 2000, 5000, count].filter((n) => n <= count)
      // The run's start, as its figure was taken (its last round trip's end less its whole CPU).
      const start = ends[count - 1]! - perRoundTrip * count
      let from = 0
      const parts: Array<string> = []
      for (const to of edges) {
        const began = from === 0 ? start : ends[from - 1]!
        parts.push(`${from + 1}–${to}: ${((ends[to - 1]! - began) / (to - from)).toFixed(1)}`)
        from = to
      }
      console.log(`  µs per round trip by bucket: ${parts.join(", ")}`)
      ends.length = 0
    }
  }
  process.exit(0)
}
const each = process.argv.includes("--each")
const warmups = new Map<string, number>()
for (const [name, run] of contenders) warmups.set(name, await run())
if (counting) {
  for (const [name, run] of contenders) {
    const fibers = counter.fibers
    counter.names.clear()
    counter.fresh = new WeakSet()
    const fresh = counter.freshSteps
    const steps = await run()
    const answers = (counter.freshSteps - fresh) / count
    console.log(
      `${kind} ${name}: ${steps.toFixed(1)} steps (${
        answers.toFixed(1)
      } in fibers forked with no parent: the answers', ${(steps - answers).toFixed(1)} in the others), ${
        ((counter.fibers - fibers) / count).toFixed(2)
      } fibers per round trip`
    )
    const names = [...counter.names].sort((a, b) => b[1] - a[1]).slice(0, top)
    for (const [step, n] of names) console.log(`  ${(n / count).toFixed(2)}  ${step}`)
  }
  process.exit(0)
}
if (heapOption !== undefined) {
  interface HeapNode {
    readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
    readonly selfSize: number
    readonly children: ReadonlyArray<HeapNode>
  }
  const inspector = new Session()
  inspector.connect()
  for (const [name, run] of contenders) {
    await inspector.post("HeapProfiler.startSampling", {
      samplingInterval: 256,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: !process.argv.includes("--survivors")
    })
    await run()
    const { profile } = await inspector.post("HeapProfiler.stopSampling")
    if (option("heap-out") !== undefined) {
      writeFileSync(
        `${option("heap-out")}.${contenders.findIndex(([n]) => n === name)}.heapprofile`,
        JSON.stringify(profile)
      )
    }
    const sites = new Map<string, number>()
    let total = 0
    const walk = (node: HeapNode) => {
      const { functionName, lineNumber, url } = node.callFrame
      const site = `${functionName || "(anonymous)"} ${url.replace(/^.*\/(node_modules|src|esm)\//, "$1/")}:${
        lineNumber + 1
      }`
      sites.set(site, (sites.get(site) ?? 0) + node.selfSize)
      total += node.selfSize
      for (const child of node.children) walk(child)
    }
    walk(profile.head as unknown as HeapNode)
    console.log(`${kind} ${name}: ${(total / count).toFixed(0)} bytes allocated per round trip (sampled)`)
    const ranked = [...sites].sort((a, b) => b[1] - a[1]).slice(0, heapTop)
    for (const [site, bytes] of ranked) console.log(`  ${(bytes / count).toFixed(0).padStart(6)}  ${site}`)
  }
  process.exit(0)
}
for (let r = 0; r < reps; r++) {
  for (const [name, run] of contenders) samples.get(name)!.push(await run())
}
for (const [name, xs] of samples) {
  console.log(
    `${kind} ${name}: ${median(xs).toFixed(1)} CPU µs per round trip (${Math.min(...xs).toFixed(1)}–${
      Math.max(...xs).toFixed(1)
    })${
      each
        ? `; each run, the warm-up first: ${
          [warmups.get(name) ?? Number.NaN, ...xs].map((x) => x.toFixed(1)).join(", ")
        }`
        : ""
    }`
  )
}
process.exit(0)
