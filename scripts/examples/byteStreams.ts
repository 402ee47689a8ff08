// The CLI behind byte streams: `Transport.layerByteStreams` over a child process whose streams are
// wrapped as Effect streams, the way a sandbox SDK, `docker exec` or an SSH channel hands them
// over. The child is `sh -c 'exec claude …'`, a stand-in for `docker exec -i box claude …`: the
// SDK sees only its stdin sink, stdout and stderr streams, exit code and a kill.
//
//   npx tsx scripts/examples/byteStreams.ts     offline: the CLI talks to ScriptedModel on 127.0.0.1
//
// It asks a question the model answers with a tool call (a hook sees it), then interrupts a slow
// second answer, and prints what happened. The test suite runs `runByteStreams` so it cannot rot.
import { NodeContext, NodeRuntime, NodeSink, NodeStream } from "@effect/platform-node"
import { Deferred, Effect, Stream } from "effect"
import { spawn } from "node:child_process"
import { pathToFileURL } from "node:url"
import * as Discovery from "../../src/internal/cli/discovery.js"
import { ClaudeAgent, Hook, Message, SessionServices, Transport } from "../../src/index.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"

/**
 * A transport that runs the CLI through `sh -c 'exec "$0" "$@"'` with the session's argv,
 * environment and working directory. Replace the spawn with your sandbox's exec: everything after
 * it is what `fromByteStreams` needs.
 */
export const shellTransport = (cli: string) =>
  Transport.Transport.layerByteStreams(Effect.gen(function*() {
    const { launch } = yield* SessionServices.SessionLaunch
    const child = spawn("sh", ["-c", "exec \"$0\" \"$@\"", cli, ...launch.args], {
      cwd: launch.cwd,
      env: launch.env,
      stdio: ["pipe", "pipe", "pipe"]
    })
    // The exit as the remote side reports it; an `error` (the shell could not start) is a lost
    // connection.
    const exit = Effect.async<Transport.ExitStatus, Error>((resume) => {
      if (child.exitCode !== null || child.signalCode !== null) {
        return resume(Effect.succeed({ exitCode: child.exitCode ?? undefined, signal: child.signalCode ?? undefined }))
      }
      child.once("exit", (code, signal) =>
        resume(Effect.succeed({ exitCode: code ?? undefined, signal: signal ?? undefined })))
      child.once("error", (error) =>
        resume(Effect.fail(error)))
    })
    const streams: Transport.ByteStreams = {
      stdin: NodeSink.fromWritable(() => child.stdin, (error) => error),
      stdout: NodeStream.fromReadable(() => child.stdout, (error) => error),
      stderr: NodeStream.fromReadable(() => child.stderr, (error) => error),
      exit,
      close: Effect.sync(() => void child.kill("SIGTERM")),
      pid: child.pid
    }
    return streams
  }))

// What the scripted model does: a Bash call (`ls`) for the first question, its answer once the tool's
// result is back, and a slow reply for the second question (interrupted).
const script: ReadonlyArray<ScriptedModel.Rule> = [
  {
    match: (req) => ScriptedModel.lastUserText(req).includes("README") && ScriptedModel.toolResultCount(req) === 0,
    reply: ScriptedModel.toolUse("Bash", { command: "ls", description: "List the files" })
  },
  {
    match: (req) => ScriptedModel.toolResultCount(req) === 1 && !ScriptedModel.lastUserText(req).includes("poem"),
    reply: ScriptedModel.text("There is no README here.")
  },
  {
    match: (req) => ScriptedModel.lastUserText(req).includes("poem"),
    reply: ScriptedModel.slowText("la ".repeat(200), { chunkSize: 3, delayMs: 25 })
  }
]

const resultText = (m: Message.ResultMessage): string => m.subtype === "success" ? m.result : `(${m.subtype})`

/** The example: one answered question with a hook call, then an interrupted turn. */
export const runByteStreams = (cli: string, write: (text: string) => void) =>
  Effect.gen(function*() {
    const model = yield* ScriptedModel.make(script)
    const options = yield* model.options()
    const agent = ClaudeAgent.make({ transport: shellTransport(cli) })
    const hooked: Array<string> = []
    const watchTools = Hook.on("PreToolUse", (input) =>
      Effect.sync(() => {
        hooked.push(input.tool_name)
        write(`  [hook] PreToolUse ${input.tool_name}\n`)
      }).pipe(Effect.as({})))
    const session = yield* agent.session({
      ...options,
      includePartialMessages: true,
      hooks: { PreToolUse: [{ hooks: [watchTools] }] }
    })

    write("> Is there a README?\n")
    yield* session.send("Is there a README?")
    const first = yield* session.receiveResponse.pipe(Stream.filter(Message.isResult), Stream.runLast)
    const answer = first._tag === "Some" ? resultText(first.value) : "(no result)"
    write(`${answer}\n`)

    write("> Write a long poem.\n")
    yield* session.send("Write a long poem.")
    const streaming = yield* Deferred.make<void>()
    const turn = yield* session.receiveResponse.pipe(
      Stream.tap((m) => (m.type === "stream_event" ? Deferred.succeed(streaming, undefined) : Effect.void)),
      Stream.filter(Message.isResult),
      Stream.runLast,
      Effect.fork
    )
    yield* Deferred.await(streaming)
    yield* session.interrupt()
    write("  [interrupted]\n")
    const second = yield* turn.await.pipe(Effect.flatten)
    const interrupted = second._tag === "Some" ? second.value.subtype : "(no result)"
    write(`${interrupted}\n`)
    return { answer, hooked, interrupted, pid: session.pid }
  })

const main = Effect.gen(function*() {
  const cli = yield* Discovery.findCli(undefined, process.env)
  const write = (text: string) => void process.stdout.write(text)
  write(`(offline: ${cli} through sh -c, its streams wrapped; the model is ScriptedModel on 127.0.0.1)\n`)
  yield* Effect.scoped(runByteStreams(cli, write))
})

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  NodeRuntime.runMain(main.pipe(Effect.provide(NodeContext.layer)))
}
