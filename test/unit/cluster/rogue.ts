// A rogue cluster peer for the authentication tests: it knows a runner's host and port and speaks
// `@effect/cluster`'s runner RPCs to it directly (as the cluster's own nodes do), over a connection
// that carries whatever handshake the rogue has: none, a wrong key's, or one recorded elsewhere.
import { EntityAddress, EntityId, EntityType, Runners, type Sharding, Snowflake } from "@effect/cluster"
import { Headers } from "@effect/platform"
import * as Socket from "@effect/platform/Socket"
import * as NodeSocket from "@effect/platform-node/NodeSocket"
import { RpcClient, RpcSerialization } from "@effect/rpc"
import { Effect, Exit, Redacted, type Scope, Stream } from "effect"
import * as net from "node:net"
import type { Duplex } from "node:stream"
import * as Handshake from "../../../src/cluster/internal/handshake.js"

// A peer that knows only the runner's address: it speaks `@effect/cluster`'s runner RPCs over a
// connection opened by `open`, and asks the entity for `tag` directly, as the cluster would.
export const rogue = (open: Effect.Effect<Duplex, Socket.SocketError, Scope.Scope>) =>
  Effect.gen(function*() {
    const socket = yield* NodeSocket.fromDuplex(open)
    const protocol = yield* RpcClient.makeProtocolSocket().pipe(
      Effect.provideService(Socket.Socket, socket),
      Effect.provide(RpcSerialization.layerMsgPack)
    )
    return yield* Runners.makeRpcClient.pipe(Effect.provideService(RpcClient.Protocol, protocol))
  })

export type Rogue = Effect.Effect.Success<ReturnType<typeof rogue>>

const request = (sharding: Sharding.Sharding["Type"], conversationId: string, tag: string, payload: unknown) => ({
  _tag: "Request" as const,
  requestId: Snowflake.Snowflake(BigInt(Date.now()) << 22n | BigInt(Math.floor(Math.random() * 4096))),
  address: new EntityAddress.EntityAddress({
    shardId: sharding.getShardId(EntityId.make(conversationId), "default"),
    entityType: EntityType.EntityType.make("AgentSession"),
    entityId: EntityId.make(conversationId)
  }),
  tag,
  payload,
  headers: Headers.empty
})

// What a rogue tries on `conversationId`: read its status, change its model, start a turn, and
// answer its pending permission request. Each outcome: the reply, or `undefined` if none came.
export const attack = (peer: Rogue, sharding: Sharding.Sharding["Type"], conversationId: string, prompt: string) => {
  const call = (tag: string, payload: unknown) =>
    peer.Effect({ request: request(sharding, conversationId, tag, payload), persisted: false }).pipe(
      Effect.timeout("1500 millis"),
      Effect.exit,
      Effect.map((exit) => Exit.isSuccess(exit) ? exit.value : undefined)
    )
  return Effect.all({
    status: call("Status", {}),
    model: call("SetModel", { model: "evil-model" }),
    permission: call("AnswerPermission", { toolUseId: "toolu_1", result: { behavior: "allow", updatedInput: {} } }),
    turn: peer.Stream({
      request: request(sharding, conversationId, "Send", { turnId: prompt, prompt }),
      persisted: false
    }).pipe(
      Stream.runCollect,
      Effect.timeout("1500 millis"),
      Effect.exit,
      Effect.map((exit) => Exit.isSuccess(exit) ? exit.value : undefined)
    )
  }, { concurrency: "unbounded" })
}

export const connect = (port: number) =>
  Effect.acquireRelease(
    Effect.async<net.Socket, Socket.SocketError>((resume) => {
      const conn = net.createConnection({ host: "127.0.0.1", port })
      conn.once("connect", () => resume(Effect.succeed(conn)))
      conn.on("error", (cause) => resume(Effect.fail(new Socket.SocketGenericError({ reason: "Open", cause }))))
    }),
    (conn) => Effect.sync(() => conn.destroy())
  )

export const readBytes = (conn: Duplex, n: number) =>
  Effect.async<Uint8Array>((resume) => {
    const tryRead = () => {
      const chunk: unknown = conn.read(n)
      if (chunk instanceof Uint8Array) {
        conn.off("readable", tryRead)
        resume(Effect.succeed(chunk))
      }
    }
    conn.on("readable", tryRead)
    tryRead()
  })

// Sends `response` (whatever the rogue has) after the runner's hello, then goes on as an RPC peer.
export const openWith = (port: number, response: (hello: Uint8Array) => Uint8Array) =>
  Effect.gen(function*() {
    const conn = yield* connect(port)
    conn.write(response(yield* readBytes(conn, Handshake.HELLO_BYTES)))
    return conn
  })

export const key = (value: string) => Redacted.make(Uint8Array.from(Buffer.from(value, "utf8")))
