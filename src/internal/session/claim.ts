/**
 * Parked spares: a CLI started with `--await-claim` under the host-level options, initialized
 * before any folder is known, then bound to one session by `claim_session` with the per-session
 * options. Works over any way of opening sessions (`ClaudeAgent.make`'s, or a pool's).
 *
 * A claim holds the prompt until the CLI has accepted the claim and every per-session option
 * (`model`, `maxThinkingTokens`, the `settings` overlay): a refused claim has then never run the
 * prompt, whatever the reason, and the caller can always fall back to a cold start.
 *
 * @internal
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Effect, ExecutionStrategy, Exit, Option, Ref, Scope } from "effect"
import type * as AgentSession from "../../AgentSession.js"
import * as Control from "../../schema/Control.js"
import * as Options from "../../schema/Options.js"
import {
  ClaimRefused,
  type ClaimRefusalReason,
  type ControlError,
  OptionsError,
  type SdkError
} from "../../SdkError.js"
import type { RequestError } from "../../services/ControlChannel.js"
import * as Launch from "../cli/launch.js"
import type { OpenSession } from "./query.js"

/**
 * What a claim hands back: the session (its first prompt already sent) and what the CLI said.
 *
 * @internal
 */
export interface Claimed {
  readonly session: AgentSession.AgentSession
  /** The canonical working directory the CLI bound the session to. */
  readonly cwd: string
  readonly sessionId: string
  /** How long the process waited parked, as the CLI measured it. */
  readonly parkedMs: number | undefined
  /** The claimed session's `initialize` reply (the folder's commands, agents, models). */
  readonly initialize: Option.Option<Control.InitializeResponse>
  /** Stops the CLI now rather than when the scope the spare was parked in closes. */
  readonly close: Effect.Effect<void>
}

/**
 * A parked spare.
 *
 * @internal
 */
export interface Spare {
  /** The parked session: initialized, bound to no folder. */
  readonly parked: AgentSession.AgentSession
  /** Where the process waits (the host options' `cwd`, or a fresh temporary directory). */
  readonly parkingDirectory: string
  /** Binds the spare to a session; with a prompt, sends it once every option is accepted. */
  readonly claim: (
    prompt: AgentSession.Prompt | undefined,
    options: Options.ClaimOptions
  ) => Effect.Effect<Claimed, ClaimRefused | OptionsError>
  /** Stops the parked CLI now (a no-op once it has stopped). */
  readonly close: Effect.Effect<void>
  /** Completes when the CLI's output has ended: a spare that dies while parked is to be replaced. */
  readonly exited: Effect.Effect<void>
}

// A spare has no session yet: these name one.
const sessionFields = ["resume", "continue", "forkSession", "sessionId", "resumeSessionAt", "resumeDropsTurn"] as const

const refuseSessionFields = <R>(host: Options.Options<R>): Effect.Effect<void, OptionsError> => {
  const field = sessionFields.find((name) => host[name] !== undefined)
  return field === undefined ? Effect.void : Effect.fail(
    new OptionsError({ field, detail: "a parked spare has no session yet; give it to a cold session instead" })
  )
}

// A fresh directory holds no project settings, CLAUDE.md or `.claude` folder that would apply to
// the parked process (and, through it, to every claim).
const parkingDirectory = <R>(host: Options.Options<R>): Effect.Effect<string, OptionsError, Scope.Scope> =>
  host.cwd !== undefined ? Effect.succeed(host.cwd) : Effect.flatMap(
    Effect.serviceOption(FileSystem.FileSystem),
    Option.match({
      onNone: () =>
        Effect.fail(
          new OptionsError({
            field: "cwd",
            detail:
              "a parked spare needs a neutral directory to wait in: pass `cwd`, or provide a FileSystem to make one"
          })
        ),
      onSome: (fs) =>
        fs.makeTempDirectoryScoped({ prefix: "claude-spare-" }).pipe(
          Effect.flatMap((dir) => fs.realPath(dir)),
          Effect.mapError((error) =>
            new OptionsError({ field: "cwd", detail: `could not make a parking directory: ${error.message}` })
          )
        )
    })
  )

/**
 * Starts a CLI parked under the host-level options, in a scope of its own inside the caller's:
 * closing either stops it.
 *
 * @internal
 */
export const park = <R>(
  open: OpenSession,
  host: Options.Options<R> = {}
): Effect.Effect<Spare, SdkError, Scope.Scope | R> =>
  Effect.gen(function*() {
    yield* refuseSessionFields(host)
    const scope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
    const started = Effect.gen(function*() {
      const dir = yield* parkingDirectory(host)
      const parked = yield* open(Launch.withAwaitClaim({ ...host, cwd: dir }))
      yield* parked.initializationResult
      return { parked, dir }
    }).pipe(
      Scope.extend(scope),
      Effect.onExit((exit) => Exit.isFailure(exit) ? Scope.close(scope, exit) : Effect.void)
    )
    const { dir, parked } = yield* started
    const claimed = yield* Ref.make(false)
    const close = Scope.close(scope, Exit.void)
    const context = { parked, close, sdkMcpServers: sdkServerNames(host) }
    const spare: Spare = {
      parked,
      parkingDirectory: dir,
      close,
      exited: Effect.ignore(parked.control.closed),
      claim: (prompt, input) =>
        Effect.gen(function*() {
          const options = yield* Options.validateClaim(input)
          if (yield* Ref.getAndSet(claimed, true)) {
            return yield* new ClaimRefused({
              reason: "not_claimed",
              code: "already_claimed",
              detail: "this spare has already been claimed"
            })
          }
          return yield* claimWith(context, prompt, options).pipe(Effect.onError(() => close))
        }).pipe(Effect.withSpan("ClaudeAgent.claim", { captureStackTrace: false }))
    }
    return spare
  }).pipe(Effect.withSpan("ClaudeAgent.park", { captureStackTrace: false }))

const sdkServerNames = <R>(host: Options.Options<R>): ReadonlyArray<string> =>
  Object.entries(host.mcpServers ?? {}).flatMap(([name, server]) => server.type === "sdk" ? [name] : [])

// The overlay's keys the CLI applies after the claim, as part of the session (the rest is applied
// before it, so that it decides which of the folder's MCP servers and plugins the claim starts).
const sessionSettingKeys: ReadonlyArray<string> = [
  "model",
  "agent",
  "fastMode",
  "permissions",
  "availableModels",
  "disableAutoMode"
]

type Settings = { readonly [key: string]: unknown }

const splitSettings = (settings: Settings | undefined) => {
  const before: Record<string, unknown> = {}
  const after: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(settings ?? {})) {
    if (value === undefined) continue
    if (sessionSettingKeys.includes(key)) after[key] = value
    else before[key] = value
  }
  const orNone = (part: Settings) => Object.keys(part).length > 0 ? Option.some(part) : Option.none()
  return { before: orNone(before), after: orNone(after) }
}

const claimPayload = (
  options: Options.ClaimOptions,
  sdkMcpServers: ReadonlyArray<string>
): Control.ClaimSessionPayload => {
  const env = Object.entries(options.env ?? {}).filter((entry): entry is [string, string] => entry[1] !== undefined)
  return {
    cwd: options.cwd,
    ...(options.permissionMode === undefined ? {} : { permission_mode: options.permissionMode }),
    ...(env.length === 0 ? {} : { env: Object.fromEntries(env) }),
    ...(options.additionalDirectories === undefined ? {} : { additional_directories: options.additionalDirectories }),
    ...(options.appendSystemPrompt === undefined ? {} : { append_system_prompt: options.appendSystemPrompt }),
    ...(options.title === undefined ? {} : { title: options.title }),
    ...(options.agents === undefined ? {} : { agents: options.agents }),
    sdk_mcp_servers: sdkMcpServers,
    include_initialize: true
  }
}

// The CLI's refusals read `<code>: <text>`; some also carry the code as `error_code`.
const codeOf = (error: ControlError): string | undefined => error.errorCode ?? /^([a-z][a-z_]*):/.exec(error.error)?.[1]

// A refusal of one of the requests around the claim (`set_model`, `apply_flag_settings`): their
// text starts with the subtype, not a code, so only an `error_code` is kept. An argument refused
// before it was sent is the same refusal.
const refusal = (reason: ClaimRefusalReason, error: RequestError): ClaimRefused =>
  error._tag === "ControlError"
    ? new ClaimRefused({ reason, code: error.errorCode, detail: error.error })
    : error._tag === "OptionsError"
    ? new ClaimRefused({ reason, detail: error.message })
    : new ClaimRefused({ reason: "claim_failed", detail: error.message })

const claimRefusal = (error: RequestError): ClaimRefused => {
  if (error._tag !== "ControlError") return refusal("claim_failed", error)
  const code = codeOf(error)
  const reason = code === "permission_mode_not_claimable" || code === "claim_failed" ? code : "not_claimed"
  return new ClaimRefused({ reason, code, detail: error.error })
}

const claimWith = (
  context: {
    readonly parked: AgentSession.AgentSession
    readonly close: Effect.Effect<void>
    readonly sdkMcpServers: ReadonlyArray<string>
  },
  prompt: AgentSession.Prompt | undefined,
  options: Options.ClaimOptions
): Effect.Effect<Claimed, ClaimRefused> =>
  Effect.gen(function*() {
    const session = context.parked
    const settings = splitSettings(options.settings)
    if (Option.isSome(settings.before)) {
      yield* session.applyFlagSettings(settings.before.value).pipe(
        Effect.mapError((e) => refusal("settings_not_applied", e))
      )
    }
    const reply = yield* session.control.request(Control.ClaimSession, claimPayload(options, context.sdkMcpServers))
      .pipe(
        Effect.mapError(claimRefusal)
      )
    // Independent of each other: one round trip for all of them.
    yield* Effect.all([
      options.model === undefined
        ? Effect.void
        : Effect.mapError(session.setModel(options.model), (e) => refusal("option_not_applied", e)),
      options.maxThinkingTokens === undefined
        ? Effect.void
        : Effect.mapError(
          session.setMaxThinkingTokens(options.maxThinkingTokens),
          (e) => refusal("option_not_applied", e)
        ),
      Option.match(settings.after, {
        onNone: () => Effect.void,
        onSome: (after) => Effect.mapError(session.applyFlagSettings(after), (e) => refusal("settings_not_applied", e))
      })
    ], { concurrency: "unbounded", discard: true })
    if (prompt !== undefined) {
      yield* session.send(prompt).pipe(
        Effect.mapError((e) => new ClaimRefused({ reason: "claim_failed", detail: e.message }))
      )
    }
    const claimed: Claimed = {
      session,
      cwd: reply.cwd,
      sessionId: reply.session_id,
      parkedMs: reply.parked_ms,
      initialize: Option.fromNullable(reply.initialize),
      close: context.close
    }
    return claimed
  })

const claimEnvKeys: ReadonlyArray<string> = [
  "CLAUDE_CODE_OAUTH_TOKEN",
  "CLAUDE_CODE_SESSION_ACCESS_TOKEN",
  "CLAUDE_CODE_HOST_SESSION_ID"
]

const envPart = (env: { readonly [key: string]: string | undefined }, claim: boolean): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [key, value] of Object.entries(env)) {
    if (value !== undefined && claimEnvKeys.includes(key) === claim) out[key] = value
  }
  return out
}

/**
 * Splits a request's options into the host-level half (what a spare must have been parked with to
 * serve it) and the claim (its per-session half: `Options.claimOptionKeys` and the three claim
 * environment variables); no claim without a `cwd` to bind to. For a pool: a request whose `host`
 * equals a spare's host options can claim it.
 *
 * @internal
 */
export const splitOptions = <R>(
  options: Options.Options<R>
): { readonly host: Options.Options<R>; readonly claim: Option.Option<Options.ClaimOptions> } => {
  const { additionalDirectories, agents, cwd, maxThinkingTokens, model, permissionMode, title, ...rest } = options
  const host: Options.Options<R> = options.env === undefined ? rest : { ...rest, env: envPart(options.env, false) }
  if (cwd === undefined) return { host, claim: Option.none() }
  const env = envPart(options.env ?? {}, true)
  const claim: Options.ClaimOptions = {
    cwd,
    ...(additionalDirectories === undefined ? {} : { additionalDirectories }),
    ...(agents === undefined ? {} : { agents }),
    ...(maxThinkingTokens === undefined ? {} : { maxThinkingTokens }),
    ...(model === undefined ? {} : { model }),
    ...(permissionMode === undefined ? {} : { permissionMode }),
    ...(title === undefined ? {} : { title }),
    ...(Object.keys(env).length === 0 ? {} : { env })
  }
  return { host, claim: Option.some(claim) }
}
