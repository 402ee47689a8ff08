// The README's cluster example: conversations as `@effect/cluster` entities on one machine,
// durable in a SQLite file (`AgentCluster.layerSqlite`).
//
//   npm run example:cluster                 offline: the real claude CLI against ScriptedModel on 127.0.0.1
//   npm run example:cluster -- --live       the real Anthropic API (needs ANTHROPIC_API_KEY)
//
// Two conversations run at once, two turns each; each conversation is an entity whose CLI session
// is resumed from the session store in the same file. Then the "process" stops (the cluster layer is closed: every CLI
// ends) and starts again on the same database file, and one conversation goes on: a new CLI,
// resumed, remembers the earlier turns. The test suite runs `runOffline` so it cannot rot.
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Option, Stream } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { AgentPool, Message, SessionStore } from "../../src/index.js"
import type { Options } from "../../src/index.js"
import { AgentCluster, AgentEntity } from "../../src/cluster/index.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"

/** The turns: [conversation, prompt], the first two of each conversation in parallel. */
export const FIRST_TURNS: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
  ["alice", ["My name is Alice and I collect stamps. Remember that.", "What do I collect?"]],
  ["bob", ["I'm Bob; my favourite game is chess.", "Which game do I like?"]]
]
/** After the restart. */
export const LATER_TURN = ["alice", "And what is my name?"] as const

// ---- The scripted model: each answer needs what the conversation said earlier ----

const said = (r: ScriptedModel.RecordedRequest, text: string) => JSON.stringify(r.messages).includes(text)
const asks = (prompt: string, ...earlier: ReadonlyArray<string>) => (r: ScriptedModel.RecordedRequest) =>
  ScriptedModel.lastUserText(r).includes(prompt) && earlier.every((e) => said(r, e))

const script: ReadonlyArray<ScriptedModel.Rule> = [
  { match: asks("My name is Alice"), reply: ScriptedModel.text("Nice to meet you, Alice. Stamps, noted.") },
  { match: asks("I'm Bob"), reply: ScriptedModel.text("Hello Bob! Chess it is.") },
  { match: asks("What do I collect?", "I collect stamps"), reply: ScriptedModel.text("You collect stamps.") },
  { match: asks("Which game do I like?", "chess"), reply: ScriptedModel.text("You like chess.") },
  {
    match: asks("And what is my name?", "My name is Alice", "You collect stamps."),
    reply: ScriptedModel.text("Your name is Alice.")
  }
]

// ---- The program ----

/** The cluster of one process: a SQLite file, at most 2 CLIs at once. */
const clusterOn = (filename: string, options: Options.Options) =>
  AgentCluster.layerSqlite({ filename, options, maxIdleTime: "1 minute" }).pipe(
    Layer.provide(AgentPool.layer({ maxConcurrent: 2 })),
    Layer.provideMerge(NodeContext.layer)
  )

/** One turn through the cluster; prints the answer as it arrives and returns it. */
const turn = (write: (text: string) => void, conversationId: string, prompt: string) =>
  AgentEntity.send(conversationId, prompt).pipe(
    Stream.tap((m) =>
      Effect.sync(() => Message.isAssistant(m) && write(`[${conversationId}] ${Message.assistantText(m)}\n`))
    ),
    Stream.filter(Message.isResult),
    Stream.runLast,
    Effect.map(Option.match({ onNone: () => "", onSome: (r) => ("result" in r ? r.result : r.subtype) }))
  )

export interface ClusterRun {
  readonly answers: ReadonlyArray<readonly [string, string]>
  readonly statuses: ReadonlyArray<AgentEntity.Status>
  readonly later: string
  readonly storedEntries: number
}

export const runCluster = (options: Options.Options, write: (text: string) => void) =>
  Effect.gen(function*() {
    const dir = yield* Effect.acquireRelease(
      Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "example-cluster-"))),
      (d) => Effect.sync(() => fs.rmSync(d, { recursive: true, force: true }))
    )
    const filename = path.join(dir, "agents.db")
    write(`cluster database: ${filename}\n`)

    // First process: both conversations at once, each turn after the previous one of its conversation.
    const first = yield* Effect.gen(function*() {
      const answers = yield* Effect.forEach(FIRST_TURNS, ([conversationId, prompts]) =>
        Effect.forEach(prompts, (prompt) =>
          Effect.map(turn(write, conversationId, prompt), (answer) =>
            [conversationId, answer] as const)), {
        concurrency: "unbounded"
      })
      const client = yield* AgentEntity.AgentEntity.client
      const statuses = yield* Effect.forEach(FIRST_TURNS, ([conversationId]) =>
        client(conversationId).Status())
      for (const s of statuses) {
        write(
          `[${s.conversationId}] session ${s.sessionId}: ${s.turns} turns, model ${s.model}, CLI running: ${s.running}\n`
        )
      }
      return { answers: answers.flat(), statuses }
    }).pipe(Effect.provide(clusterOn(filename, options)))
    write("-- the process stops: every CLI ends; the conversations are in the database --\n")

    // Second process, same database: the conversation goes on in a new CLI, resumed.
    const [conversationId, prompt] = LATER_TURN
    const { later, storedEntries } = yield* Effect.gen(function*() {
      const later = yield* turn(write, conversationId, prompt)
      const store = yield* SessionStore.SessionStore
      const stored = yield* store.load(yield* AgentEntity.sessionRefFor(conversationId, { cwd: options.cwd }))
      return {
        later,
        storedEntries: Option.match(stored, {
          onNone: () =>
            0,
          onSome: (entries) => entries.length
        })
      }
    }).pipe(Effect.provide(clusterOn(filename, options)))
    write(`[${conversationId}] transcript in the database: ${storedEntries} entries\n`)
    return { ...first, later, storedEntries } satisfies ClusterRun
  })

/** The offline run: a ScriptedModel and its isolated HOME / working directory. */
export const runOffline = (write: (text: string) => void) =>
  Effect.gen(function*() {
    const model = yield* ScriptedModel.make(script)
    const options = yield* model.options()
    const result = yield* runCluster(options, write)
    return { ...result, requests: yield* model.mainRequests, home: options.env.HOME }
  })

const main = Effect.gen(function*() {
  const live = process.argv.includes("--live")
  const write = (text: string) => void process.stdout.write(text)
  if (live) {
    write("(live: the real Anthropic API)\n")
    const cwd = fs.mkdtempSync(path.join(fs.realpathSync(os.tmpdir()), "cluster-"))
    yield* Effect.scoped(runCluster({ cwd }, write))
  } else {
    write("(offline: the real claude CLI against a scripted model on 127.0.0.1; --live for the real API)\n")
    yield* Effect.scoped(runOffline(write))
  }
})

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main.pipe(Effect.provide(NodeContext.layer), NodeRuntime.runMain)
}
