// Parked spares over the in-memory fake CLI: what `park` launches, what a claim writes on the wire
// for each option, each refusal as a typed `ClaimRefused`, a second claim, and the parked
// process's end when its scope closes.
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Layer, Option, Predicate, Scope, Stream } from "effect"
import * as ClaudeAgent from "../../../src/ClaudeAgent.js"
import * as Launch from "../../../src/internal/cli/launch.js"
import * as Claim from "../../../src/internal/session/claim.js"
import * as SessionServices from "../../../src/layers/SessionServices.js"
import * as McpServer from "../../../src/McpServer.js"
import * as Control from "../../../src/schema/Control.js"
import * as Options from "../../../src/schema/Options.js"
import { Transport } from "../../../src/services/Transport.js"
import * as FakeCli from "../../../src/testing/FakeCli.js"

const requestOf = (frame: FakeCli.JsonObject): FakeCli.JsonObject =>
  Predicate.isRecord(frame.request) ? frame.request : {}

// What the SDK wrote after `initialize`: control requests as `subtype` + fields, user messages as "user".
const wireAfterInitialize = (cli: FakeCli.FakeCliHandle) =>
  Effect.map(cli.sent, (frames) =>
    frames.flatMap((frame): ReadonlyArray<FakeCli.JsonObject | "user"> => {
      if (frame.type === "user") return ["user"]
      if (frame.type !== "control_request") return []
      const request = requestOf(frame)
      return request.subtype === "initialize" ? [] : [request]
    }))

// A ClaudeAgent over the fake CLI that hands the test the launch and the CLI handle of its session.
const agentWithCli = (behaviour: FakeCli.Behaviour = {}) =>
  Effect.gen(function*() {
    const handle = yield* Deferred.make<{ readonly cli: FakeCli.FakeCliHandle; readonly launch: Launch.Launch }>()
    const agent = ClaudeAgent.make({
      transport: Layer.scoped(
        Transport,
        Effect.gen(function*() {
          const { launch } = yield* SessionServices.SessionLaunch
          const { cli, transport } = yield* FakeCli.make(behaviour)
          yield* Deferred.succeed(handle, { cli, launch })
          return transport
        })
      )
    })
    return { layer: Layer.succeed(ClaudeAgent.ClaudeAgent, agent), started: Deferred.await(handle) }
  })

const refuseWith = <R extends Control.Request.Any>(descriptor: R, error: string): FakeCli.Answer =>
  FakeCli.answer(descriptor, () => Effect.succeed(FakeCli.controlFailure(error)))

describe("parked spares (fake CLI)", () => {
  it.scoped("park starts the CLI with --await-claim in its parking directory and completes initialize", () =>
    Effect.gen(function*() {
      const { layer, started } = yield* agentWithCli()
      const spare = yield* ClaudeAgent.park({
        cwd: "/spares",
        model: "claude-haiku-4-5",
        extraArgs: { "foo-flag": null }
      }).pipe(
        Effect.provide(layer)
      )
      const { cli, launch } = yield* started
      expect(launch.args).toContain(`--${Launch.awaitClaimFlag}`)
      expect(launch.args).toContain("--foo-flag")
      expect(launch.args).toContain("--model=claude-haiku-4-5")
      expect(launch.cwd).toBe("/spares")
      expect(spare.parkingDirectory).toBe("/spares")
      const subtypes = (yield* cli.sent).map((frame) => requestOf(frame).subtype)
      expect(subtypes).toEqual(["initialize"])
    }))

  it.scoped("a claim sends the claim's fields with the CLI's names, then model, thinking and settings, then the prompt", () =>
    Effect.gen(function*() {
      const { layer, started } = yield* agentWithCli()
      const shout = McpServer.make({ name: "shout", tools: [] })
      const spare = yield* ClaudeAgent.park({ cwd: "/spares", mcpServers: { shout } }).pipe(Effect.provide(layer))
      const claimed = yield* spare.claim("hello", {
        cwd: "/work/a",
        additionalDirectories: ["/work/shared"],
        model: "claude-sonnet-4-5",
        permissionMode: "acceptEdits",
        maxThinkingTokens: 4000,
        appendSystemPrompt: "Be brief.",
        title: "A",
        agents: { reviewer: { description: "Reviews", prompt: "Review." } },
        settings: { effortLevel: "high", fastMode: true },
        env: { CLAUDE_CODE_HOST_SESSION_ID: "host-1" }
      })
      const { cli } = yield* started
      const wire = yield* wireAfterInitialize(cli)
      // The overlay's folder-level keys go ahead of the claim, its session keys after it.
      expect(wire[0]).toEqual({ subtype: "apply_flag_settings", settings: { effortLevel: "high" } })
      expect(wire[1]).toEqual({
        subtype: "claim_session",
        cwd: "/work/a",
        permission_mode: "acceptEdits",
        env: { CLAUDE_CODE_HOST_SESSION_ID: "host-1" },
        additional_directories: ["/work/shared"],
        append_system_prompt: "Be brief.",
        title: "A",
        agents: { reviewer: { description: "Reviews", prompt: "Review." } },
        sdk_mcp_servers: ["shout"],
        include_initialize: true
      })
      expect(wire.slice(2, 5)).toEqual(expect.arrayContaining([
        { subtype: "set_model", model: "claude-sonnet-4-5" },
        { subtype: "set_max_thinking_tokens", max_thinking_tokens: 4000 },
        { subtype: "apply_flag_settings", settings: { fastMode: true } }
      ]))
      expect(wire[5]).toBe("user")
      expect(wire).toHaveLength(6)
      expect(claimed.cwd).toBe("/work/a")
      expect(claimed.sessionId).toBe(cli.sessionId)
      expect(Option.map(claimed.initialize, (init) => init.current_permission_mode)).toEqual(Option.some("acceptEdits"))
      const response = yield* claimed.session.receiveResponse.pipe(Stream.runCollect)
      expect([...response].some((m) => m.type === "result")).toBe(true)
    }))

  it.scoped("a claim with only a folder sends the claim and the prompt, nothing else", () =>
    Effect.gen(function*() {
      const { layer, started } = yield* agentWithCli()
      const spare = yield* ClaudeAgent.park({ cwd: "/spares" }).pipe(Effect.provide(layer))
      yield* spare.claim("hello", { cwd: "/work/b" })
      const wire = yield* wireAfterInitialize((yield* started).cli)
      expect(wire).toEqual([
        { subtype: "claim_session", cwd: "/work/b", sdk_mcp_servers: [], include_initialize: true },
        "user"
      ])
    }))

  const refusals: ReadonlyArray<{
    readonly name: string
    readonly answers: ReadonlyArray<FakeCli.Answer>
    readonly claim: Options.ClaimOptions
    readonly reason: string
    readonly code: string | undefined
  }> = [
    {
      name: "a folder the CLI refuses",
      answers: [refuseWith(Control.ClaimSession, "cwd_not_found: the claim cwd does not exist or is not accessible")],
      claim: { cwd: "/missing" },
      reason: "not_claimed",
      code: "cwd_not_found"
    },
    {
      name: "a permission mode the process cannot take",
      answers: [refuseWith(
        Control.ClaimSession,
        "permission_mode_not_claimable: Cannot set permission mode to bypassPermissions because the session was not launched with --dangerously-skip-permissions"
      )],
      claim: { cwd: "/work/a", permissionMode: "bypassPermissions" },
      reason: "permission_mode_not_claimable",
      code: "permission_mode_not_claimable"
    },
    {
      name: "a claim that broke in the CLI",
      answers: [refuseWith(Control.ClaimSession, "claim_failed: the session could not be set up")],
      claim: { cwd: "/work/a" },
      reason: "claim_failed",
      code: "claim_failed"
    },
    {
      name: "a refused settings overlay (before the claim)",
      answers: [refuseWith(Control.ApplyFlagSettings, "Invalid settings: effortLevel")],
      claim: { cwd: "/work/a", settings: { effortLevel: "extreme" } },
      reason: "settings_not_applied",
      code: undefined
    },
    {
      name: "a refused model",
      answers: [
        FakeCli.answer(
          Control.SetModel,
          () => Effect.succeed(FakeCli.controlFailure("set_model: claude-x is not available", "model_not_available"))
        )
      ],
      claim: { cwd: "/work/a", model: "claude-x" },
      reason: "option_not_applied",
      code: "model_not_available"
    },
    {
      name: "a refused settings overlay (after the claim)",
      answers: [refuseWith(
        Control.ApplyFlagSettings,
        "apply_flag_settings: nothing in this request was applied and earlier settings stay in force. Fix or remove these invalid settings and send it again: fastMode"
      )],
      claim: { cwd: "/work/a", settings: { fastMode: "yes" } },
      reason: "settings_not_applied",
      code: undefined
    }
  ]

  for (const refusal of refusals) {
    it.scoped(`${refusal.name} is ClaimRefused (${refusal.reason}); the prompt is not sent and the CLI is stopped`, () =>
      Effect.gen(function*() {
        const { layer, started } = yield* agentWithCli({ answers: refusal.answers })
        const spare = yield* ClaudeAgent.park({ cwd: "/spares" }).pipe(Effect.provide(layer))
        const error = yield* Effect.flip(spare.claim("hello", refusal.claim))
        expect(error._tag).toBe("ClaimRefused")
        if (error._tag !== "ClaimRefused") return
        expect(error.reason).toBe(refusal.reason)
        expect(error.code).toBe(refusal.code)
        const { cli } = yield* started
        expect(yield* wireAfterInitialize(cli)).not.toContain("user")
        yield* cli.inputEnded
      }))
  }

  it.scoped("a process that dies during the claim is claim_failed", () =>
    Effect.gen(function*() {
      const { layer, started } = yield* agentWithCli({
        onControlRequest: (request, cli) =>
          request.subtype === "claim_session"
            ? Effect.as(cli.exit({ exitCode: 137 }), Option.none())
            : Effect.succeed(Option.none())
      })
      const spare = yield* ClaudeAgent.park({ cwd: "/spares" }).pipe(Effect.provide(layer))
      yield* started
      const error = yield* Effect.flip(spare.claim("hello", { cwd: "/work/a" }))
      expect(error._tag === "ClaimRefused" ? error.reason : error._tag).toBe("claim_failed")
    }))

  it.scoped("a spare that dies while parked: exited completes, and its claim is claim_failed", () =>
    Effect.gen(function*() {
      const { layer, started } = yield* agentWithCli()
      const spare = yield* ClaudeAgent.park({ cwd: "/spares" }).pipe(Effect.provide(layer))
      const { cli } = yield* started
      yield* cli.exit({ signal: "SIGKILL" })
      yield* spare.exited
      const error = yield* Effect.flip(spare.claim("hello", { cwd: "/work/a" }))
      expect(error._tag === "ClaimRefused" ? error.reason : error._tag).toBe("claim_failed")
      expect(yield* wireAfterInitialize(cli)).toEqual([])
    }))

  it.scoped("a spare claims once: the second claim is ClaimRefused without a request", () =>
    Effect.gen(function*() {
      const { layer, started } = yield* agentWithCli()
      const spare = yield* ClaudeAgent.park({ cwd: "/spares" }).pipe(Effect.provide(layer))
      yield* spare.claim("one", { cwd: "/work/a" })
      const error = yield* Effect.flip(spare.claim("two", { cwd: "/work/b" }))
      expect(error._tag === "ClaimRefused" ? [error.reason, error.code] : error._tag).toEqual([
        "not_claimed",
        "already_claimed"
      ])
      const claims = (yield* wireAfterInitialize((yield* started).cli)).filter((w) =>
        w !== "user" && w.subtype === "claim_session"
      )
      expect(claims).toHaveLength(1)
    }))

  it.scoped("invalid claim options are an OptionsError before anything is sent, and the spare stays claimable", () =>
    Effect.gen(function*() {
      const { layer, started } = yield* agentWithCli()
      const spare = yield* ClaudeAgent.park({ cwd: "/spares" }).pipe(Effect.provide(layer))
      const hooks = yield* Effect.flip(spare.claim("hi", { cwd: "/work/a", settings: { hooks: {} } }))
      expect(hooks._tag === "OptionsError" ? hooks.field : hooks._tag).toBe("settings")
      const startUpEnv: Record<string, string> = { PATH: "/bin" }
      const env = yield* Effect.flip(spare.claim("hi", { cwd: "/work/a", env: startUpEnv }))
      expect(env._tag === "OptionsError" ? env.field : env._tag).toBe("env.PATH")
      expect(yield* wireAfterInitialize((yield* started).cli)).toEqual([])
      const claimed = yield* spare.claim("hi", { cwd: "/work/a" })
      expect(claimed.cwd).toBe("/work/a")
    }))

  it.effect("closing the scope of an unclaimed spare stops its CLI", () =>
    Effect.gen(function*() {
      const { layer, started } = yield* agentWithCli()
      const scope = yield* Scope.make()
      yield* ClaudeAgent.park({ cwd: "/spares" }).pipe(Effect.provide(layer), Scope.extend(scope))
      const { cli } = yield* started
      yield* Scope.close(scope, Exit.void)
      yield* cli.inputEnded
      expect(yield* wireAfterInitialize(cli)).toEqual([])
    }))

  it.scoped("options naming a session are refused at park, and without cwd or FileSystem there is nowhere to park", () =>
    Effect.gen(function*() {
      const { layer } = yield* agentWithCli()
      const resume = yield* Effect.flip(ClaudeAgent.park({ cwd: "/spares", resume: "abc" }).pipe(Effect.provide(layer)))
      expect(resume._tag === "OptionsError" ? resume.field : resume._tag).toBe("resume")
      const nowhere = yield* Effect.flip(ClaudeAgent.park().pipe(Effect.provide(layer)))
      expect(nowhere._tag === "OptionsError" ? nowhere.field : nowhere._tag).toBe("cwd")
    }))

  it("splitOptions: the claim's fields and env variables go to the claim, the rest stays host-level", () => {
    const { claim, host } = Claim.splitOptions({
      cwd: "/work/a",
      model: "claude-haiku-4-5",
      permissionMode: "plan",
      title: "T",
      maxTurns: 3,
      allowedTools: ["Read"],
      env: { ANTHROPIC_BASE_URL: "http://127.0.0.1:1", CLAUDE_CODE_HOST_SESSION_ID: "h" }
    })
    expect(host).toEqual({ maxTurns: 3, allowedTools: ["Read"], env: { ANTHROPIC_BASE_URL: "http://127.0.0.1:1" } })
    expect(claim).toEqual(Option.some({
      cwd: "/work/a",
      model: "claude-haiku-4-5",
      permissionMode: "plan",
      title: "T",
      env: { CLAUDE_CODE_HOST_SESSION_ID: "h" }
    }))
    // Two requests that differ only in folder and model share their host-level half.
    expect(Claim.splitOptions({ cwd: "/b", model: "m", maxTurns: 3 }).host).toEqual(
      Claim.splitOptions({ cwd: "/c", maxTurns: 3 }).host
    )
    expect(Claim.splitOptions({ model: "m" }).claim).toEqual(Option.none())
  })

  it.effect("validateClaim checks claim options as validate checks options: required cwd, typos, types", () =>
    Effect.gen(function*() {
      const untyped: unknown = { cwd: "/work/a", modell: "claude-haiku-4-5" }
      const typo = yield* Effect.flip(Options.validateClaim(Object(untyped)))
      expect([typo.field, typo.detail]).toEqual(["modell", "unknown option; did you mean `model`?"])
      const noCwd: unknown = { model: "claude-haiku-4-5" }
      expect((yield* Effect.flip(Options.validateClaim(Object(noCwd)))).field).toBe("cwd")
      const mode = yield* Effect.flip(Options.validateClaim(Object({ cwd: "/a", permissionMode: "yolo" })))
      expect(mode.field).toBe("permissionMode")
      expect(yield* Options.validateClaim({ cwd: "/a", maxThinkingTokens: 0 })).toEqual({
        cwd: "/a",
        maxThinkingTokens: 0
      })
    }))
})
