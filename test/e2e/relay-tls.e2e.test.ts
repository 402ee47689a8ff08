// The relay over `wss`: a self-signed certificate made for the test with openssl, given to the
// relay through CLAUDE_RELAY_TLS_CERT / CLAUDE_RELAY_TLS_KEY, trusted by the host's WebSocket
// constructor (ws with the certificate as its CA), and refused by a host that does not trust it.
import { NodeContext } from "@effect/platform-node"
import * as Socket from "@effect/platform/Socket"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option, Predicate, Redacted, Stream } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as Message from "../../src/schema/Message.js"
import * as Transport from "../../src/services/Transport.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"
import { startRelay, token } from "./relaySupport.js"

const selfSigned = Effect.acquireRelease(
  Effect.sync(() => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "relay-tls-"))
    const cert = path.join(dir, "cert.pem")
    const key = path.join(dir, "key.pem")
    execFileSync("openssl", [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      key,
      "-out",
      cert,
      "-days",
      "1",
      "-subj",
      "/CN=127.0.0.1",
      "-addext",
      "subjectAltName=IP:127.0.0.1"
    ], { stdio: "ignore" })
    return { dir, cert, key }
  }),
  ({ dir }) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
)

// `ws` (what NodeSocket.layerWebSocketConstructor uses) with a CA: the one way to trust a
// self-signed certificate without touching the process's settings.
const trusting = (ca: string) => {
  const ws: unknown = createRequire(import.meta.url)("ws")
  if (!Predicate.hasProperty(ws, "WebSocket") || typeof ws.WebSocket !== "function") throw new Error("no ws")
  const WebSocketClass = ws.WebSocket
  return Layer.succeed(
    Socket.WebSocketConstructor,
    (url, protocols) => Reflect.construct(WebSocketClass, [url, protocols, { ca }])
  )
}

const agentOver = (url: string, constructor: Layer.Layer<Socket.WebSocketConstructor>) =>
  ClaudeAgent.make({
    transport: Transport.Transport.layerWebSocket({ url, token: Redacted.make(token) }).pipe(Layer.provide(constructor))
  })

describe("e2e: the relay over wss", () => {
  it.scopedLive("a host that trusts the certificate talks to the CLI; one that does not cannot connect", () =>
    Effect.gen(function*() {
      const tls = yield* selfSigned
      const relay = yield* startRelay({ CLAUDE_RELAY_TLS_CERT: tls.cert, CLAUDE_RELAY_TLS_KEY: tls.key })
      expect(relay.url.startsWith("wss://127.0.0.1:")).toBe(true)
      const model = yield* ScriptedModel.make([{ reply: ScriptedModel.text("over tls"), times: Infinity }])
      const options = yield* model.options()

      const messages = yield* Effect.scoped(Effect.gen(function*() {
        const session = yield* agentOver(relay.url, trusting(fs.readFileSync(tls.cert, "utf8"))).session(options)
        yield* session.send("hello")
        return yield* session.receiveResponse.pipe(Stream.runCollect)
      }))
      const result = [...messages].find(Message.isResult)
      expect(result?.subtype === "success" ? result.result : result?.subtype).toBe("over tls")

      const untrusted = yield* Effect.scoped(agentOver(relay.url, trusting("")).session(options)).pipe(Effect.exit)
      const error = Exit.isFailure(untrusted) ? Option.getOrUndefined(Cause.failureOption(untrusted.cause)) : undefined
      expect(error).toMatchObject({ _tag: "CLIConnectionError", reason: "SpawnFailed" })
    }).pipe(Effect.provide(NodeContext.layer)))
})
