/**
 * The relay's WebSocket server: `@effect/platform-node`'s, on a plain TCP port or behind an HTTPS
 * server for `wss`, serving every connection with `connection.ts`.
 *
 * @internal
 */
import { NodeSocketServer } from "@effect/platform-node"
import type * as SocketServer from "@effect/platform/SocketServer"
import { Effect, type Scope } from "effect"
import * as https from "node:https"
import * as Connection from "./connection.js"

/**
 * Where and how to listen.
 *
 * @internal
 */
export interface Listen {
  readonly host: string
  readonly port: number
  readonly maxMessageBytes: number
  readonly tls?: { readonly cert: string; readonly key: string } | undefined
}

/**
 * The address the server listens on.
 *
 * @internal
 */
export interface Address {
  readonly host: string
  readonly port: number
  readonly url: string
}

// `ws` takes the HTTPS server's `listening` event as its own: it is listening once the HTTPS
// server is, and listen is called only after `ws` has subscribed (the fibers start in order).
const secureServer = (listen: Listen, tls: NonNullable<Listen["tls"]>) =>
  Effect.gen(function*() {
    const server = https.createServer({ cert: tls.cert, key: tls.key })
    yield* Effect.addFinalizer(() => Effect.sync(() => server.closeAllConnections()))
    const [socketServer] = yield* Effect.all([
      NodeSocketServer.makeWebSocket({ server, maxPayload: listen.maxMessageBytes }),
      Effect.sync(() => server.listen(listen.port, listen.host))
    ], { concurrency: "unbounded" })
    return socketServer
  })

const open = (
  listen: Listen
): Effect.Effect<SocketServer.SocketServer["Type"], SocketServer.SocketServerError, Scope.Scope> =>
  listen.tls === undefined
    ? NodeSocketServer.makeWebSocket({ host: listen.host, port: listen.port, maxPayload: listen.maxMessageBytes })
    : secureServer(listen, listen.tls)

/**
 * Listens and serves connections in the current scope; returns the address.
 *
 * @internal
 */
export const serve = (
  listen: Listen,
  settings: Connection.Settings
): Effect.Effect<Address, SocketServer.SocketServerError, Scope.Scope> =>
  Effect.gen(function*() {
    const server = yield* open(listen)
    yield* Effect.forkScoped(server.run(Connection.handle(settings)))
    const port = server.address._tag === "TcpAddress" ? server.address.port : listen.port
    const scheme = listen.tls === undefined ? "ws" : "wss"
    return { host: listen.host, port, url: `${scheme}://${listen.host}:${port}` }
  })
