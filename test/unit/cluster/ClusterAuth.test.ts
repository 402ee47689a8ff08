// Runners authenticate their peers: a socket runner on 127.0.0.1 (SQLite for the cluster's tables,
// the fake CLI behind the entity) and a legitimate client-only node, both holding the secret, and
// rogue peers that speak the runner's RPC protocol directly with no key, a wrong key, or a
// handshake captured from another connection. The rogues get no reply and change nothing; the
// legitimate node keeps working.
import { Sharding } from "@effect/cluster"
import * as Socket from "@effect/platform/Socket"
import { NodeContext } from "@effect/platform-node"
import type { SqlClient as SqlClientService } from "@effect/sql/SqlClient"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, ConfigProvider, Context, Effect, Fiber, Layer, Metric, Queue, Redacted, Stream } from "effect"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { Message, SessionStores } from "effect-claude-agent"
import { AgentCluster, AgentEntity } from "effect-claude-agent/cluster"
import { FakeCli } from "effect-claude-agent/testing"
import * as Handshake from "../../../src/cluster/internal/handshake.js"
import * as PeerAuth from "../../../src/cluster/internal/peerAuth.js"
import { attack, connect, key, openWith, readBytes, rogue } from "./rogue.js"

const secret = randomBytes(32).toString("base64")
const withSecret = (value: string | undefined) =>
  Layer.setConfigProvider(ConfigProvider.fromMap(new Map(value === undefined ? [] : [["AGENT_CLUSTER_SECRET", value]])))

const timings = {
  refreshAssignmentsInterval: 100,
  entityMessagePollInterval: 200,
  entityReplyPollInterval: 100,
  shardLockRefreshInterval: 1000,
  shardLockExpiration: 5000,
  entityTerminationTimeout: 1000,
  sendRetryInterval: 50,
  runnerHealthCheckInterval: 1000
}

const freePort = Effect.async<number>((resume) => {
  const server = net.createServer()
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(Effect.succeed(port)))
  })
})

const canBind = (port: number) =>
  Effect.async<boolean>((resume) => {
    const server = net.createServer()
    server.once("error", () => resume(Effect.succeed(false)))
    server.listen(port, "127.0.0.1", () => server.close(() => resume(Effect.succeed(true))))
  })

const reasons = ["closed", "timeout", "bad-proof"] as const

// Connections the runner refused so far, for one reason or for all of them.
const refused = (reason?: (typeof reasons)[number]): Effect.Effect<number> =>
  reason === undefined
    ? Effect.map(Effect.all(reasons.map(refused)), (counts) => counts.reduce((a, b) => a + b, 0))
    : Effect.map(Metric.value(Metric.tagged(AgentCluster.peersRefused, "reason", reason)), (state) => state.count)

// The runner: the entity over a fake CLI whose "tool" turns ask the client for Bash (toolu_1).
const runnerSetup = Effect.gen(function*() {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "cluster-auth-")))
  yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
  const turns = yield* Queue.unbounded<string>()
  const agent = FakeCli.layerClaudeAgent({
    onUserMessage: (message, cli) =>
      Effect.gen(function*() {
        const prompt = FakeCli.userText(message)
        yield* Queue.offer(turns, prompt)
        yield* cli.emit(FakeCli.frames.systemInit({ model: "claude-fake-1" }))
        if (prompt === "tool") {
          yield* cli.requestRaw({
            subtype: "can_use_tool",
            tool_name: "Bash",
            input: { command: "ls" },
            tool_use_id: "toolu_1",
            permission_suggestions: []
          })
        }
        yield* cli.emit(FakeCli.frames.assistantText(`echo: ${prompt}`))
        yield* cli.emit(FakeCli.frames.result(`echo: ${prompt}`))
      })
  })
  const sql = yield* Layer.build(SqliteClient.layer({ filename: path.join(dir, "cluster.db") }))
  const port = yield* freePort
  const runner = yield* Layer.build(
    AgentEntity.layer({ askClient: true, options: { cwd: dir, env: { CLAUDE_CONFIG_DIR: path.join(dir, "config") } } })
      .pipe(
        Layer.provide([agent, SessionStores.layerMemory, NodeContext.layer]),
        Layer.provideMerge(AgentCluster.layerSocketRunner({ host: "127.0.0.1", port, shardingConfig: timings })),
        Layer.provide(Layer.succeedContext(sql)),
        Layer.provide(withSecret(secret))
      )
  )
  const client = yield* Layer.build(
    AgentCluster.layerSocketClient({ shardingConfig: timings }).pipe(
      Layer.provide(Layer.succeedContext(sql)),
      Layer.provide(withSecret(secret))
    )
  )
  return { port, turns, runner, client }
})

describe("AgentCluster socket layout: peers authenticate", () => {
  it.scopedLive("rogue peers (no key, wrong key, replayed handshake) get nothing; the cluster's own node works", () =>
    Effect.gen(function*() {
      const { client, port, runner, turns } = yield* runnerSetup
      const sharding = Context.get(runner, Sharding.Sharding)
      const legit = (yield* Effect.provide(AgentEntity.AgentEntity.client, client))("c1")

      // A turn waiting for the client's permission, started by the legitimate node.
      const firstTurn = yield* AgentEntity.send("c1", "tool", { turnId: "t1" }).pipe(
        Stream.runCollect,
        Effect.provide(client),
        Effect.fork
      )
      const waiting = yield* legit.Status().pipe(Effect.repeat({ until: (s) => s.pendingPermissions.length > 0 }))
      expect(waiting.model).toBe("claude-fake-1")
      expect(yield* Queue.take(turns)).toBe("tool")

      // The harness itself reaches the entity when the handshake is right.
      const right = yield* rogue(Effect.flatMap(connect(port), (conn) =>
        Effect.as(
          Effect.mapError(PeerAuth.prove(conn, key(secret), "runner"), (cause) =>
            new Socket.SocketGenericError({ reason: "Open", cause })),
          conn
        )))
      const control = yield* attack(right, sharding, "c2", "control")
      expect(control.status).toMatchObject({ _tag: "WithExit", exit: { _tag: "Success" } })
      expect(control.model).toMatchObject({ _tag: "WithExit", exit: { _tag: "Success" } })

      // A handshake recorded on one connection, replayed on another.
      const recorded = yield* Effect.gen(function*() {
        const conn = yield* connect(port)
        const hello = yield* readBytes(conn, Handshake.HELLO_BYTES)
        const serverNonce = Handshake.parseHello(hello) ?? new Uint8Array()
        const response = Handshake.respond(Redacted.value(key(secret)), serverNonce, Handshake.nonce())
        conn.write(response)
        expect(yield* readBytes(conn, Handshake.CONFIRM_BYTES)).toHaveLength(Handshake.CONFIRM_BYTES)
        conn.destroy()
        return response
      })

      const before = { all: yield* refused(), badProof: yield* refused("bad-proof") }
      const noKey = yield* rogue(connect(port))
      const wrongKey = yield* rogue(
        openWith(port, (hello) =>
          Handshake.respond(
            Redacted.value(key(randomBytes(32).toString("base64"))),
            hello.subarray(4),
            Handshake.nonce()
          ))
      )
      const replay = yield* rogue(openWith(port, () => recorded))

      for (const peer of [noKey, wrongKey, replay]) {
        expect(yield* attack(peer, sharding, "c1", "rogue")).toEqual({
          status: undefined,
          model: undefined,
          permission: undefined,
          turn: undefined
        })
      }
      expect((yield* refused()) - before.all).toBeGreaterThanOrEqual(3)
      expect((yield* refused("bad-proof")) - before.badProof).toBeGreaterThanOrEqual(2)

      // Nothing changed: same model, the permission still pending, no other turn; the cluster's
      // own node answers it and the turn completes.
      const after = yield* legit.Status()
      expect(after.model).toBe("claude-fake-1")
      expect(after.pendingPermissions.map((p) => p.toolUseId)).toEqual(["toolu_1"])
      expect(after.turns).toBe(0)
      // The control's turn on c2 ran; no rogue's did.
      expect(Chunk.toArray(yield* Queue.takeAll(turns))).toEqual(["control"])
      expect(yield* legit.AnswerPermission({ toolUseId: "toolu_1", result: { behavior: "allow" } })).toBe(true)
      const messages = yield* Fiber.join(firstTurn)
      expect([...messages].filter(Message.isResult)).toHaveLength(1)
      expect((yield* legit.Status()).turns).toBe(1)
    }))
})

describe("AgentCluster socket layout: start-up without the secret", () => {
  const build = <A, E>(layer: Layer.Layer<A, E, SqlClientService>, secretValue: string | undefined) =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cluster-auth-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
      return yield* Layer.build(layer).pipe(
        Effect.provide(SqliteClient.layer({ filename: path.join(dir, "cluster.db") })),
        Effect.provide(withSecret(secretValue)),
        Effect.flip
      )
    })

  it.scopedLive("a runner on a non-loopback address, or on loopback, refuses to start, and binds nothing", () =>
    Effect.gen(function*() {
      for (const host of ["0.0.0.0", "127.0.0.1"]) {
        const port = yield* freePort
        const error = yield* build(AgentCluster.layerSocketRunner({ host, port }), undefined)
        expect(error).toBeInstanceOf(AgentCluster.ClusterSecretError)
        expect(error).toMatchObject({ reason: "Missing" })
        expect(String(error.message)).toContain(host)
        expect(yield* canBind(port)).toBe(true)
      }
    }))

  it.scopedLive("a secret shorter than 32 bytes is refused; a client-only node needs the secret too", () =>
    Effect.gen(function*() {
      const port = yield* freePort
      const short = yield* build(AgentCluster.layerSocketRunner({ host: "127.0.0.1", port }), "x".repeat(31))
      expect(short).toMatchObject({ _tag: "ClusterSecretError", reason: "TooShort" })
      const client = yield* build(AgentCluster.layerSocketClient(), undefined)
      expect(client).toMatchObject({ _tag: "ClusterSecretError", reason: "Missing" })
    }))
})
