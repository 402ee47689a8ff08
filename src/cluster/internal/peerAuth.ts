/**
 * The handshake (`handshake.ts`) on the cluster's TCP connections: a `SocketServer` that refuses
 * every connection whose peer does not prove the cluster key before its socket reaches the RPC
 * server, and a client protocol whose connections prove it before any RPC is written.
 *
 * Both sides read the handshake's fixed-size frames in paused mode (`read(n)` on `readable`), so
 * whatever the peer sends after its last frame stays in the socket's buffer for the RPC layer,
 * which starts reading (`data`) once the handshake is over.
 *
 * @internal
 */
import { Runners, type RunnerAddress } from "@effect/cluster"
import * as Socket from "@effect/platform/Socket"
import { SocketServer } from "@effect/platform/SocketServer"
import * as NodeSocket from "@effect/platform-node/NodeSocket"
import { RpcClient, RpcSerialization } from "@effect/rpc"
import { Duration, Effect, Layer, Metric, Option, Redacted, Schema } from "effect"
import * as Net from "node:net"
import type { Duplex } from "node:stream"
import * as Handshake from "./handshake.js"

/** @internal Why a handshake did not complete. */
export class HandshakeError extends Schema.TaggedError<HandshakeError>(
  "effect-claude-agent/cluster/HandshakeError"
)("HandshakeError", {
  reason: Schema.Literal("closed", "timeout", "bad-hello", "bad-proof", "refused", "bad-confirm"),
  peer: Schema.String
}) {
  override get message(): string {
    return `cluster handshake with ${this.peer} failed: ${this.reason}`
  }
}

/** @internal Connections refused by a runner, tagged with `reason`. */
export const peersRefused = Metric.counter("claude_agent_cluster_peers_refused", {
  description: "Connections to a runner refused because the peer did not prove the cluster key",
  incremental: true
})

/** @internal How long a runner waits for a peer's proof. */
export const serverTimeout = Duration.seconds(5)
/** @internal How long a node waits for a runner's hello and confirmation. */
export const clientTimeout = Duration.seconds(3)

type Reason = HandshakeError["reason"]

// Exactly `n` bytes, or the reason there are none: the stream ended or failed first.
const readExactly = (conn: Duplex, n: number, onClose: Reason, peer: string) =>
  Effect.async<Uint8Array, HandshakeError>((resume) => {
    const cleanup = () => {
      conn.off("readable", tryRead)
      conn.off("end", closed)
      conn.off("close", closed)
      conn.off("error", closed)
    }
    function tryRead() {
      const chunk: unknown = conn.read(n)
      if (!(chunk instanceof Uint8Array)) return
      cleanup()
      resume(
        chunk.length === n ? Effect.succeed(chunk) : Effect.fail(new HandshakeError({ reason: onClose, peer }))
      )
    }
    function closed() {
      cleanup()
      resume(Effect.fail(new HandshakeError({ reason: onClose, peer })))
    }
    conn.on("readable", tryRead)
    conn.on("end", closed)
    conn.on("close", closed)
    conn.on("error", closed)
    tryRead()
    return Effect.sync(cleanup)
  })

// Not waiting for the write's callback: a failed write closes the socket, which the next read (or
// the RPC layer, after the last frame) reports.
const write = (conn: Duplex, bytes: Uint8Array) =>
  Effect.sync(() => {
    conn.write(bytes)
  })

const peerOf = (conn: Duplex): string =>
  conn instanceof Net.Socket ? `${conn.remoteAddress ?? "unknown"}:${conn.remotePort ?? 0}` : "unknown"

/** @internal The runner's side: succeeds once the peer has proven the key, and confirmed to it. */
export const accept = (conn: Duplex, key: Redacted.Redacted<Uint8Array>, peer: string = peerOf(conn)) =>
  Effect.gen(function*() {
    const serverNonce = Handshake.nonce()
    yield* write(conn, Handshake.hello(serverNonce))
    const response = yield* readExactly(conn, Handshake.RESPONSE_BYTES, "closed", peer)
    const clientNonce = Handshake.checkResponse(Redacted.value(key), serverNonce, response)
    if (clientNonce === undefined) return yield* new HandshakeError({ reason: "bad-proof", peer })
    yield* write(conn, Handshake.confirm(Redacted.value(key), serverNonce, clientNonce))
  }).pipe(
    Effect.timeoutFail({ duration: serverTimeout, onTimeout: () => new HandshakeError({ reason: "timeout", peer }) })
  )

/** @internal The connecting side: succeeds once it has proven the key and the runner has too. */
export const prove = (conn: Duplex, key: Redacted.Redacted<Uint8Array>, peer: string) =>
  Effect.gen(function*() {
    const serverNonce = Handshake.parseHello(yield* readExactly(conn, Handshake.HELLO_BYTES, "closed", peer))
    if (serverNonce === undefined) return yield* new HandshakeError({ reason: "bad-hello", peer })
    const clientNonce = Handshake.nonce()
    yield* write(conn, Handshake.respond(Redacted.value(key), serverNonce, clientNonce))
    const confirmation = yield* readExactly(conn, Handshake.CONFIRM_BYTES, "refused", peer)
    if (!Handshake.checkConfirm(Redacted.value(key), serverNonce, clientNonce, confirmation)) {
      return yield* new HandshakeError({ reason: "bad-confirm", peer })
    }
  }).pipe(
    Effect.timeoutFail({ duration: clientTimeout, onTimeout: () => new HandshakeError({ reason: "timeout", peer }) })
  )

// A warning the first time a host fails, debug lines after: a peer that keeps retrying (a node
// with the wrong key, a scanner) is counted every time but does not flood the log.
const logOncePerHost = (message: (error: HandshakeError) => string) => {
  const seen = new Set<string>()
  return (host: string, error: HandshakeError) => {
    if (seen.has(host)) return Effect.logDebug(message(error))
    if (seen.size >= 1024) seen.clear()
    seen.add(host)
    return Effect.logWarning(message(error))
  }
}

const hostOf = (conn: Duplex): string => (conn instanceof Net.Socket ? conn.remoteAddress : undefined) ?? "unknown"

/**
 * @internal `server`, with each connection handed to the handler only once its peer has proven
 * the key; any other connection is closed, counted in `peersRefused` and logged once per host.
 */
export const authenticateServer = (
  server: SocketServer["Type"],
  key: Redacted.Redacted<Uint8Array>
): SocketServer["Type"] => {
  const log = logOncePerHost((error) =>
    `${error.message}; connection refused (the peer does not hold this cluster's AGENT_CLUSTER_SECRET)`
  )
  const refuse = (conn: Duplex, error: HandshakeError) =>
    Effect.sync(() => conn.destroy()).pipe(
      Effect.zipRight(Metric.increment(Metric.tagged(peersRefused, "reason", error.reason))),
      Effect.zipRight(log(hostOf(conn), error))
    )
  return SocketServer.of({
    address: server.address,
    run: (handler) =>
      server.run((socket) =>
        Effect.flatMap(Effect.serviceOption(NodeSocket.NetSocket), (conn) =>
          Option.isNone(conn)
            // Only NodeSocketServer's connections can be authenticated: refuse anything else.
            ? Effect.dieMessage("AgentCluster: a runner connection without its net.Socket cannot be authenticated")
            : accept(conn.value, key).pipe(
              Effect.matchEffect({ onFailure: (error) => refuse(conn.value, error), onSuccess: () => handler(socket) })
            ))
      )
  })
}

const connectTcp = (address: RunnerAddress.RunnerAddress) =>
  Effect.async<Net.Socket, Socket.SocketError>((resume) => {
    const conn = Net.createConnection({ host: address.host, port: address.port, timeout: 5500 })
    conn.once("connect", () => resume(Effect.succeed(conn)))
    // Stays for the connection's life: an `error` without a listener would crash the process.
    conn.on("error", (cause) => resume(Effect.fail(new Socket.SocketGenericError({ reason: "Open", cause }))))
    return Effect.sync(() => conn.destroy())
  }).pipe(
    Effect.timeoutFail({
      duration: Duration.seconds(1),
      onTimeout: () => new Socket.SocketGenericError({ reason: "OpenTimeout", cause: "connection timed out" })
    })
  )

// One authenticated connection to a runner: opened again by the socket on each reconnect.
const openAuthenticated = (
  address: RunnerAddress.RunnerAddress,
  key: Redacted.Redacted<Uint8Array>,
  log: (host: string, error: HandshakeError) => Effect.Effect<void>
) =>
  Effect.gen(function*() {
    const conn = yield* Effect.acquireRelease(connectTcp(address), (conn) =>
      Effect.sync(() => {
        if (!conn.closed) conn.destroySoon()
      }))
    const peer = `${address.host}:${address.port}`
    yield* prove(conn, key, peer).pipe(
      Effect.tapError((error) => log(peer, error)),
      Effect.mapError((cause) => new Socket.SocketGenericError({ reason: "Open", cause }))
    )
    return conn
  })

/**
 * @internal The cluster's client protocol (as `NodeClusterSocket.layerClientProtocol`), each
 * connection authenticated with `key` before the RPC client uses it.
 */
export const layerClientProtocol = (
  key: Redacted.Redacted<Uint8Array>
): Layer.Layer<Runners.RpcClientProtocol, never, RpcSerialization.RpcSerialization> =>
  Layer.effect(
    Runners.RpcClientProtocol,
    Effect.gen(function*() {
      const serialization = yield* RpcSerialization.RpcSerialization
      const log = logOncePerHost((error) =>
        error.reason === "refused"
          ? `${error.message}: the runner closed the connection at this node's proof (is AGENT_CLUSTER_SECRET the same on every node?)`
          : error.message
      )
      return Effect.fnUntraced(function*(address: RunnerAddress.RunnerAddress) {
        const socket = yield* NodeSocket.fromDuplex(openAuthenticated(address, key, log))
        return yield* RpcClient.makeProtocolSocket().pipe(
          Effect.provideService(Socket.Socket, socket),
          Effect.provideService(RpcSerialization.RpcSerialization, serialization)
        )
      })
    })
  )
