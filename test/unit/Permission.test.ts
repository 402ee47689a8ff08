// canUseTool over the in-memory fake CLI (a mock transport): the CLI's can_use_tool requests and
// the answers the SDK writes.
import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber, Stream } from "effect"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as Permission from "../../src/Permission.js"
import type * as Options from "../../src/schema/Options.js"
import * as FakeCli from "../../src/testing/FakeCli.js"

const writeRequest = {
  subtype: "can_use_tool",
  tool_name: "Write",
  display_name: "Write",
  input: { file_path: "/work/out.txt", content: "original" },
  description: "out.txt",
  permission_suggestions: [
    { type: "setMode", mode: "acceptEdits", destination: "session" },
    { type: "fromTheFuture", whatever: 1 }
  ],
  tool_use_id: "toolu_write_1"
}

// Runs one session whose fake CLI asks `request` and hands back the SDK's control_response.
const ask = <R>(options: Options.Options<R>, request: { readonly subtype: string; readonly [k: string]: unknown }) =>
  Effect.gen(function*() {
    const reply = yield* Deferred.make<FakeCli.JsonObject>()
    const layer = FakeCli.layerClaudeAgent({
      onUserMessage: (m, cli) =>
        cli.requestRaw(request).pipe(
          Effect.flatMap((r) => Deferred.succeed(reply, r)),
          Effect.zipRight(FakeCli.echoTurn(m, cli))
        )
    })
    yield* Effect.scoped(Effect.gen(function*() {
      const session = yield* ClaudeAgent.session(options)
      yield* session.send("go")
      yield* session.receiveResponse.pipe(Stream.runDrain)
    })).pipe(Effect.provide(layer))
    return yield* Deferred.await(reply)
  })

class Policy extends Context.Tag("test/Policy")<Policy, { readonly allowed: ReadonlyArray<string> }>() {}

describe("canUseTool (fake CLI)", () => {
  it.effect("allow with updatedInput; the context carries the CLI's fields and readable suggestions", () =>
    Effect.gen(function*() {
      let seen: Permission.CanUseToolContext | undefined
      const reply = yield* ask({
        canUseTool: (_tool, input, context) =>
          Effect.sync(() => {
            seen = context
            return Permission.allow({ updatedInput: { ...input, content: "rewritten" } })
          })
      }, writeRequest)
      expect(reply.subtype).toBe("success")
      expect(reply.response).toEqual({
        behavior: "allow",
        updatedInput: { file_path: "/work/out.txt", content: "rewritten" },
        toolUseID: "toolu_write_1"
      })
      expect(seen?.toolUseID).toBe("toolu_write_1")
      expect(seen?.displayName).toBe("Write")
      expect(seen?.suggestions).toEqual([{ type: "setMode", mode: "acceptEdits", destination: "session" }])
      expect(seen?.raw.permission_suggestions).toHaveLength(2)
    }))

  it.effect("a bare allow sends the original input back; deny carries message and interrupt", () =>
    Effect.gen(function*() {
      const allowed = yield* ask({ canUseTool: () => Effect.succeed(Permission.allow()) }, writeRequest)
      expect(allowed.response).toMatchObject({ behavior: "allow", updatedInput: writeRequest.input })
      const denied = yield* ask(
        { canUseTool: () => Effect.succeed(Permission.deny("no", { interrupt: true })) },
        writeRequest
      )
      expect(denied.response).toEqual({ behavior: "deny", message: "no", interrupt: true, toolUseID: "toolu_write_1" })
    }))

  it.effect("decisionClassification goes to the CLI with the answer, as in the official SDK", () =>
    Effect.gen(function*() {
      const allowed = yield* ask({
        canUseTool: () => Effect.succeed({ behavior: "allow", decisionClassification: "user_permanent" })
      }, writeRequest)
      expect(allowed.response).toMatchObject({ behavior: "allow", decisionClassification: "user_permanent" })
      const denied = yield* ask({
        canUseTool: () => Effect.succeed({ behavior: "deny", message: "no", decisionClassification: "user_reject" })
      }, writeRequest)
      expect(denied.response).toMatchObject({ behavior: "deny", decisionClassification: "user_reject" })
    }))

  it.effect("allow with updatedPermissions passes a CLI suggestion back", () =>
    Effect.gen(function*() {
      const reply = yield* ask({
        canUseTool: (_tool, _input, { suggestions }) =>
          Effect.succeed(Permission.allow({ updatedPermissions: suggestions }))
      }, writeRequest)
      expect(reply.response).toMatchObject({
        behavior: "allow",
        updatedPermissions: [{ type: "setMode", mode: "acceptEdits", destination: "session" }]
      })
    }))

  it.effect("a failing callback or an invalid answer is an error response, never an allow", () =>
    Effect.gen(function*() {
      const failed = yield* ask({ canUseTool: () => Effect.fail(new Error("policy store down")) }, writeRequest)
      expect(failed.subtype).toBe("error")
      expect(String(failed.error)).toContain("policy store down")
      const invalid = yield* ask({ canUseTool: () => Effect.succeed({ behavior: "maybe" } as never) }, writeRequest)
      expect(invalid.subtype).toBe("error")
      expect(String(invalid.error)).toContain("invalid result")
    }))

  it.effect("the handler fails an invalid answer with OptionsError naming canUseTool", () =>
    Effect.gen(function*() {
      const handler = yield* Permission.makeHandler(() => Effect.succeed({ behavior: "maybe" } as never))
      const { subtype: _, ...request } = writeRequest
      const error = yield* handler(request, "req_1").pipe(Effect.flip)
      expect(error).toMatchObject({ _tag: "OptionsError", field: "canUseTool" })
      expect(String(error)).toContain("returned an invalid result")
    }))

  it.effect("the callback uses a service provided where the session is built", () =>
    Effect.gen(function*() {
      const reply = yield* ask({
        canUseTool: (tool) =>
          Effect.map(Policy, (p) => (p.allowed.includes(tool) ? Permission.allow() : Permission.deny(`${tool} is off`)))
      }, writeRequest).pipe(Effect.provideService(Policy, { allowed: ["Read"] }))
      expect(reply.response).toMatchObject({ behavior: "deny", message: "Write is off" })
    }))

  it.effect("a control_cancel_request interrupts the callback and no answer is written", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const interrupted = yield* Deferred.make<void>()
      const layer = FakeCli.layerClaudeAgent({
        onUserMessage: (m, cli) =>
          Effect.gen(function*() {
            const pending = yield* Effect.fork(cli.requestRaw(writeRequest, "perm-1"))
            yield* Deferred.await(started)
            yield* cli.cancel("perm-1")
            yield* Deferred.await(interrupted)
            const answered = yield* Fiber.poll(pending)
            expect(answered._tag).toBe("None")
            yield* Fiber.interrupt(pending)
            yield* FakeCli.echoTurn(m, cli)
          })
      })
      yield* Effect.scoped(Effect.gen(function*() {
        const session = yield* ClaudeAgent.session({
          canUseTool: () =>
            Deferred.succeed(started, undefined).pipe(
              Effect.zipRight(Effect.never),
              Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
            )
        })
        yield* session.send("go")
        yield* session.receiveResponse.pipe(Stream.runDrain)
      })).pipe(Effect.provide(layer))
      expect(yield* Deferred.isDone(interrupted)).toBe(true)
    }))
})

describe("canUseTool from untyped JavaScript", () => {
  it.effect("an async callback (a Promise, as in the official SDK) is an error answer saying an Effect is expected", () =>
    Effect.gen(function*() {
      const asyncCallback = async () => ({ behavior: "allow", updatedInput: {} })
      const reply = yield* ask({
        canUseTool: () => asyncCallback() as unknown as Effect.Effect<Permission.PermissionResult>
      }, writeRequest)
      expect(reply.subtype).toBe("error")
      expect(String(reply.error)).toContain("`canUseTool`: returned a Promise, where an Effect is expected")
      expect(String(reply.error)).toContain("Effect.promise")
    }))
})
