// The stop sequence against a real child process that ignores stdin EOF, the `interrupt` request
// and SIGTERM: closing a session's scope, or interrupting the fiber consuming `query`, must still
// end it (SIGKILL after the grace periods). A stub process, not the real CLI: the real one never
// ignores SIGTERM.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Option, Stream } from "effect"
import { fileURLToPath } from "node:url"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as SessionServices from "../../src/layers/SessionServices.js"
import * as Transport from "../../src/services/Transport.js"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"
import { isAlive } from "../support/processes.js"

const AgentLive = ClaudeAgent.layer.pipe(Layer.provide(NodeContext.layer))

const stubborn = {
  pathToClaudeCodeExecutable: fileURLToPath(new URL("../fixtures/stubborn-cli.mjs", import.meta.url)),
  env: { CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK: "1" },
  closeGracePeriod: "200 millis"
} as const

describe("e2e: a CLI that ignores EOF and SIGTERM is still ended", () => {
  it.scopedLive("closing the session's scope", () =>
    Effect.gen(function*() {
      const pid = yield* Effect.scoped(Effect.gen(function*() {
        const session = yield* ClaudeAgent.session(stubborn)
        const init = yield* session.initializationResult
        expect(init.pid).toBe(Option.getOrUndefined(session.pid))
        yield* session.send("hello")
        return Option.getOrThrow(session.pid)
      }))
      expect(isAlive(pid)).toBe(false)
    }).pipe(Effect.provide(AgentLive)))

  it.scopedLive("interrupting the fiber that consumes query", () =>
    Effect.gen(function*() {
      // The stub says `ready <pid>` on stderr once it has answered initialize.
      const ready = yield* Deferred.make<number>()
      const fiber = yield* ClaudeAgent.query("hello", {
        ...stubborn,
        stderr: (line) => {
          const match = /^ready (\d+)$/.exec(line)
          if (match !== null) Deferred.unsafeDone(ready, Effect.succeed(Number(match[1])))
        }
      }).pipe(Stream.runDrain, Effect.fork)
      const pid = yield* Deferred.await(ready)
      expect(isAlive(pid)).toBe(true)
      yield* Fiber.interrupt(fiber)
      expect(isAlive(pid)).toBe(false)
    }).pipe(Effect.provide(AgentLive)))
})

describe("e2e: closing a session never waits for an answer nobody needs (real CLI)", () => {
  // The real CLI takes ≈2.3 s to notice stdin EOF before it has answered `initialize`; a session
  // closed that early stops it at once with SIGTERM instead. Once initialised, EOF ends it (exit 0).
  const capturing = Effect.gen(function*() {
    const transports: Array<Transport.TransportShape> = []
    const transport = Layer.effect(
      Transport.Transport,
      Effect.tap(Transport.Transport, (transport) => Effect.sync(() => transports.push(transport)))
    ).pipe(Layer.provide(SessionServices.subprocessTransport), Layer.provide(NodeContext.layer))
    const agent = ClaudeAgent.make({ transport })
    return { agent, transports }
  })

  it.scopedLive("before initialize is answered: SIGTERM; after: end of input and exit 0", () =>
    Effect.gen(function*() {
      const model = yield* ScriptedModel.make([{ reply: ScriptedModel.text("hi") }])
      const options = yield* model.options()
      const { agent, transports } = yield* capturing
      yield* Effect.scoped(agent.session(options))
      yield* Effect.scoped(Effect.flatMap(agent.session(options), (session) => session.initializationResult))
      expect(transports).toHaveLength(2)
      const [early, late] = transports
      if (early === undefined || late === undefined) return
      expect(yield* early.exitStatus).toMatchObject({ signal: "SIGTERM" })
      expect(yield* late.exitStatus).toEqual({ exitCode: 0, signal: undefined })
    }).pipe(Effect.provide(NodeContext.layer)))
})
