// The cluster handshake: its proofs as data (who can produce them, what a recorded one is worth
// elsewhere), and both sides over a real socket pair: a silent peer times out, a wrong key is
// refused, and bytes that follow the handshake reach the reader attached after it.
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, FastCheck as fc, Redacted, TestClock } from "effect"
import * as net from "node:net"
import * as Handshake from "../../../src/cluster/internal/handshake.js"
import * as PeerAuth from "../../../src/cluster/internal/peerAuth.js"

const bytes = (n: number) => fc.uint8Array({ minLength: n, maxLength: n })
const keyOf = (text: string) => Redacted.make(Uint8Array.from(Buffer.from(text, "utf8")))

describe("handshake proofs", () => {
  it.prop(
    "only the key's holder answers a challenge; a recorded answer fails under any other challenge",
    [bytes(32), bytes(32), bytes(32), bytes(32), bytes(32)],
    ([key, otherKey, serverNonce, otherNonce, clientNonce]) => {
      const response = Handshake.respond(key, serverNonce, clientNonce)
      expect(Buffer.from(Handshake.checkResponse(key, serverNonce, response) ?? [])).toEqual(Buffer.from(clientNonce))
      const sameKey = Buffer.compare(key, otherKey) === 0
      const sameNonce = Buffer.compare(serverNonce, otherNonce) === 0
      expect(Handshake.checkResponse(otherKey, serverNonce, response) === undefined).toBe(!sameKey)
      expect(Handshake.checkResponse(key, otherNonce, response) === undefined).toBe(!sameNonce)
    }
  )

  it("a proof does not pass for the other direction, and frames of the wrong size or magic are refused", () => {
    const key = Uint8Array.from(Buffer.alloc(32, 1))
    const serverNonce = Handshake.nonce()
    const clientNonce = Handshake.nonce()
    const response = Handshake.respond(key, serverNonce, clientNonce)
    const confirmation = Handshake.confirm(key, serverNonce, clientNonce)
    // Reflection: the runner's proof sent back as a client's, and the reverse.
    expect(Handshake.checkResponse(key, serverNonce, Buffer.concat([clientNonce, confirmation]))).toBeUndefined()
    expect(Handshake.checkConfirm(key, serverNonce, clientNonce, response.subarray(Handshake.NONCE_BYTES))).toBe(false)
    expect(Handshake.checkConfirm(key, serverNonce, clientNonce, confirmation)).toBe(true)
    expect(Handshake.checkResponse(key, serverNonce, response.subarray(1))).toBeUndefined()
    expect(Buffer.from(Handshake.parseHello(Handshake.hello(serverNonce)) ?? [])).toEqual(Buffer.from(serverNonce))
    expect(Handshake.parseHello(Buffer.concat([Buffer.from("HTTP"), serverNonce]))).toBeUndefined()
  })
})

// Two ends of one TCP connection on 127.0.0.1, destroyed with the scope.
const socketPair = Effect.acquireRelease(
  Effect.async<{ readonly server: net.Socket; readonly client: net.Socket; readonly listener: net.Server }>(
    (resume) => {
      const listener = net.createServer((server) => resume(Effect.succeed({ server, client, listener })))
      let client: net.Socket = new net.Socket()
      listener.listen(0, "127.0.0.1", () => {
        const address = listener.address()
        client = net.createConnection({
          host: "127.0.0.1",
          port: typeof address === "object" && address !== null ? address.port : 0
        })
      })
    }
  ),
  ({ client, listener, server }) =>
    Effect.sync(() => {
      client.destroy()
      server.destroy()
      listener.close()
    })
)

describe("handshake over a socket", () => {
  it.scopedLive("both sides prove the key; what the peer sends next reaches the reader attached afterwards", () =>
    Effect.gen(function*() {
      const { client, server } = yield* socketPair
      const key = keyOf("k".repeat(32))
      const accepted = yield* Effect.fork(PeerAuth.accept(server, key))
      yield* PeerAuth.prove(client, key, "runner")
      // Written before the runner's side has finished: it must wait in the socket's buffer.
      client.write("after the handshake")
      yield* Fiber.join(accepted)
      const received = yield* Deferred.make<string>()
      server.on("data", (chunk: Buffer) => Deferred.unsafeDone(received, Exit.succeed(chunk.toString("utf8"))))
      expect(yield* Deferred.await(received)).toBe("after the handshake")
    }))

  it.scopedLive("bytes in the same write as the peer's proof are left for the RPC reader", () =>
    Effect.gen(function*() {
      const { client, server } = yield* socketPair
      const key = keyOf("k".repeat(32))
      const accepted = yield* Effect.fork(PeerAuth.accept(server, key))
      const hello = yield* Effect.async<Buffer>((resume) => {
        client.once("data", (chunk: Buffer) => resume(Effect.succeed(chunk)))
      })
      const serverNonce = Handshake.parseHello(hello) ?? new Uint8Array()
      client.write(
        Buffer.concat([
          Handshake.respond(Redacted.value(key), serverNonce, Handshake.nonce()),
          Buffer.from("first request")
        ])
      )
      yield* Fiber.join(accepted)
      const received = yield* Deferred.make<string>()
      server.on("data", (chunk: Buffer) => Deferred.unsafeDone(received, Exit.succeed(chunk.toString("utf8"))))
      expect(yield* Deferred.await(received)).toBe("first request")
    }))

  it.scopedLive("a wrong key: the runner refuses its proof, the peer sees the refusal", () =>
    Effect.gen(function*() {
      const { client, server } = yield* socketPair
      const accepted = yield* Effect.fork(
        PeerAuth.accept(server, keyOf("a".repeat(32))).pipe(Effect.ensuring(Effect.sync(() => server.destroy())))
      )
      const proved = yield* Effect.flip(PeerAuth.prove(client, keyOf("b".repeat(32)), "runner"))
      expect(proved.reason).toBe("refused")
      const refused = yield* Effect.flip(Fiber.join(accepted))
      expect(refused.reason).toBe("bad-proof")
    }))

  it.scoped("a peer that never answers is refused once the runner's timeout has passed", () =>
    Effect.gen(function*() {
      const { client, server } = yield* socketPair
      const accepted = yield* Effect.fork(PeerAuth.accept(server, keyOf("k".repeat(32))))
      // The hello has arrived, so the runner's clock is running.
      yield* Effect.async<void>((resume) => {
        client.once("data", () => resume(Effect.void))
      })
      yield* TestClock.adjust(PeerAuth.serverTimeout)
      const error = yield* Effect.flip(Fiber.join(accepted))
      expect(error.reason).toBe("timeout")
    }))
})
