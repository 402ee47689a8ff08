/**
 * A relay that runs next to the Claude Code CLI (in a sandbox, a container, a VM) and lets a host
 * elsewhere drive it over a WebSocket (`Transport.layerWebSocket` on the host). Each connection
 * authenticates with a token, asks for a session (arguments, working directory, environment),
 * which the relay checks against what it allows, and gets one CLI of its own, stopped when the
 * connection ends. The wire protocol is in docs/protocol-relay.md.
 *
 * Secure by default: a token is required (compared in constant time), the executable is the
 * relay's and never the host's, the working directory must be inside an allowed root, only
 * allow-listed environment keys pass, messages are bounded in size, and a peer that stops
 * answering is dropped after `heartbeatTimeout`. Give it a certificate (`tls`) to serve `wss`.
 *
 * @since 0.1.0
 */
import { FileSystem, type Path } from "@effect/platform"
import { Config, Duration, Effect, Option, Redacted, Schema, type Scope } from "effect"
import * as Discovery from "../internal/cli/discovery.js"
import { removedEnv } from "../internal/cli/launch.js"
import { messageOf } from "../internal/process/errors.js"
import * as Server from "../internal/relay/server.js"

/**
 * The relay's configuration.
 *
 * @example
 * ```ts
 * import { Redacted } from "effect"
 * import type { Relay } from "effect-claude-agent/relay"
 *
 * const config: Relay.RelayConfig = {
 *   port: 8765,
 *   token: Redacted.make("a long random secret"),
 *   allowedRoots: ["/workspace"],
 *   allowedEnv: ["ANTHROPIC_API_KEY"]
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface RelayConfig {
  /** The interface to listen on. Default `127.0.0.1`. */
  readonly host?: string | undefined
  /** The port; `0` picks a free one. Default 8765. */
  readonly port?: number | undefined
  /** The secret every connection must present first. */
  readonly token: Redacted.Redacted<string>
  /** The CLI to start (a path). Default: found as the SDK finds it (`CLAUDE_CODE_PATH`, PATH, …). */
  readonly executable?: string | undefined
  /** Working directories a host may ask for: these and anything below them. The first is the default. */
  readonly allowedRoots: ReadonlyArray<string>
  /** Environment keys a host may set (the SDK's own keys are always allowed). Default none. */
  readonly allowedEnv?: ReadonlyArray<string> | undefined
  /**
   * The CLI's environment before the host's keys are added. Default: the relay's own, without
   * its `CLAUDE_RELAY_*` settings, `NODE_OPTIONS` and `CLAUDECODE`.
   */
  readonly env?: Readonly<Record<string, string>> | undefined
  /** The largest WebSocket message accepted, in bytes; larger ones close the connection. Default 1 MiB. */
  readonly maxMessageBytes?: number | undefined
  /** How often each side pings. Default 10 seconds. */
  readonly heartbeatInterval?: Duration.DurationInput | undefined
  /** A peer silent this long is dropped (and its CLI stopped). Default 3 × `heartbeatInterval`. */
  readonly heartbeatTimeout?: Duration.DurationInput | undefined
  /** How long a connection has to send its hello. Default 10 seconds. */
  readonly helloTimeout?: Duration.DurationInput | undefined
  /** Wait after the CLI's stdin is closed before SIGTERM, and after SIGTERM before SIGKILL. Default 5 seconds. */
  readonly closeGracePeriod?: Duration.DurationInput | undefined
  /** A certificate and its key (PEM): the relay then serves `wss`. */
  readonly tls?: { readonly cert: string; readonly key: string } | undefined
}

/**
 * The relay could not start: its configuration is unusable, no CLI was found, or it cannot listen.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Relay } from "effect-claude-agent/relay"
 *
 * declare const started: Effect.Effect<void, Relay.RelayError>
 * started.pipe(Effect.catchTag("RelayError", (e) => Effect.logError(e.description)))
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class RelayError extends Schema.TaggedError<RelayError>("effect-claude-agent/relay/RelayError")("RelayError", {
  reason: Schema.Literal("Config", "NoCli", "Listen"),
  description: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {
  /** @since 0.1.0 */
  override get message(): string {
    return this.description
  }
}

/**
 * Where a started relay listens.
 *
 * @example
 * ```ts
 * import type { Relay } from "effect-claude-agent/relay"
 *
 * const address: Relay.Address = { host: "127.0.0.1", port: 8765, url: "ws://127.0.0.1:8765" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Address {
  readonly host: string
  readonly port: number
  /** `ws://host:port`, or `wss://` with a certificate. */
  readonly url: string
}

const defaultEnv = (): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined || key.startsWith("CLAUDE_RELAY_") || removedEnv.includes(key)) continue
    env[key] = value
  }
  return env
}

const configError = (description: string) => new RelayError({ reason: "Config", description })

const command = (config: RelayConfig) =>
  Discovery.findCli(config.executable, process.env).pipe(
    Effect.map((cli) => Discovery.invocation(cli, undefined)),
    Effect.mapError((error) => new RelayError({ reason: "NoCli", description: error.message, cause: error }))
  )

/**
 * Starts the relay in the current scope: it serves connections until the scope closes (which
 * stops every CLI it started). Succeeds with the address once it listens.
 *
 * @example
 * ```ts
 * import { NodeContext } from "@effect/platform-node"
 * import { Effect, Redacted } from "effect"
 * import { Relay } from "effect-claude-agent/relay"
 *
 * const program = Effect.scoped(Effect.gen(function* () {
 *   const address = yield* Relay.make({ port: 0, token: Redacted.make("secret"), allowedRoots: ["/workspace"] })
 *   yield* Effect.log(`relay on ${address.url}`)
 *   return yield* Effect.never
 * })).pipe(Effect.provide(NodeContext.layer))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  config: RelayConfig
): Effect.Effect<Address, RelayError, Scope.Scope | FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const token = Redacted.value(config.token)
    if (token.length < 16) return yield* configError("the relay's token must be at least 16 characters")
    if (config.allowedRoots.length === 0) return yield* configError("the relay needs at least one allowed root")
    const invocation = yield* command(config)
    const interval = Duration.decode(config.heartbeatInterval ?? Duration.seconds(10))
    const maxMessageBytes = config.maxMessageBytes ?? 1024 * 1024
    return yield* Server.serve(
      { host: config.host ?? "127.0.0.1", port: config.port ?? 8765, maxMessageBytes, tls: config.tls },
      {
        policy: { token, allowedRoots: config.allowedRoots, allowedEnv: config.allowedEnv ?? [], maxArgs: 1000 },
        command: invocation.command,
        commandArgs: invocation.args,
        baseEnv: config.env ?? defaultEnv(),
        maxMessageBytes,
        heartbeatInterval: interval,
        heartbeatTimeout: Duration.decode(config.heartbeatTimeout ?? Duration.times(interval, 3)),
        helloTimeout: Duration.decode(config.helloTimeout ?? Duration.seconds(10)),
        closeGracePeriod: Duration.decode(config.closeGracePeriod ?? Duration.seconds(5))
      }
    ).pipe(
      Effect.mapError((error) =>
        new RelayError({
          reason: "Listen",
          description: `the relay cannot listen: ${messageOf(error.cause)}`,
          cause: error
        })
      )
    )
  })

const optionalFile = (name: string) => Config.option(Config.string(name)).pipe(Config.map(Option.getOrUndefined))

/**
 * The configuration from the environment (what the `effect-claude-agent-relay` bin reads):
 * `CLAUDE_RELAY_TOKEN` (required), `CLAUDE_RELAY_ROOTS` (required, comma-separated),
 * `CLAUDE_RELAY_HOST`, `CLAUDE_RELAY_PORT`, `CLAUDE_RELAY_EXECUTABLE`, `CLAUDE_RELAY_ALLOW_ENV`
 * (comma-separated), `CLAUDE_RELAY_MAX_MESSAGE_BYTES`, `CLAUDE_RELAY_HEARTBEAT` and
 * `CLAUDE_RELAY_HEARTBEAT_TIMEOUT` and `CLAUDE_RELAY_HELLO_TIMEOUT` (durations, e.g. `10 seconds`), `CLAUDE_RELAY_TLS_CERT` and
 * `CLAUDE_RELAY_TLS_KEY` (paths to PEM files).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Relay } from "effect-claude-agent/relay"
 *
 * const program = Effect.flatMap(Relay.config, (config) => Effect.log(config.allowedRoots))
 * ```
 *
 * @since 0.1.0
 * @category config
 */
export const config: Effect.Effect<RelayConfig, RelayError, FileSystem.FileSystem> = Effect.gen(function*() {
  // The error's string form names the variable (a redacted one's message is only `<redacted>`).
  const read = yield* Config.all({
    token: Config.redacted("CLAUDE_RELAY_TOKEN"),
    allowedRoots: Config.array(Config.string(), "CLAUDE_RELAY_ROOTS"),
    host: Config.withDefault(Config.string("CLAUDE_RELAY_HOST"), "127.0.0.1"),
    // `0` picks a free port (what `Config.port` refuses).
    port: Config.withDefault(
      Config.integer("CLAUDE_RELAY_PORT").pipe(
        Config.validate({ message: "a port from 0 to 65535", validation: (n) => n >= 0 && n <= 65535 })
      ),
      8765
    ),
    executable: optionalFile("CLAUDE_RELAY_EXECUTABLE"),
    allowedEnv: Config.withDefault(Config.array(Config.string(), "CLAUDE_RELAY_ALLOW_ENV"), []),
    maxMessageBytes: Config.withDefault(Config.integer("CLAUDE_RELAY_MAX_MESSAGE_BYTES"), 1024 * 1024),
    heartbeatInterval: Config.withDefault(Config.duration("CLAUDE_RELAY_HEARTBEAT"), Duration.seconds(10)),
    heartbeatTimeout: Config.option(Config.duration("CLAUDE_RELAY_HEARTBEAT_TIMEOUT")).pipe(
      Config.map(Option.getOrUndefined)
    ),
    helloTimeout: Config.withDefault(Config.duration("CLAUDE_RELAY_HELLO_TIMEOUT"), Duration.seconds(10)),
    cert: optionalFile("CLAUDE_RELAY_TLS_CERT"),
    key: optionalFile("CLAUDE_RELAY_TLS_KEY")
  }).pipe(Effect.mapError((error) => configError(`the relay's configuration: ${String(error)}`)))
  const fs = yield* FileSystem.FileSystem
  const readPem = (file: string) =>
    fs.readFileString(file).pipe(Effect.mapError((error) => configError(`cannot read ${file}: ${error.message}`)))
  const { cert, key, ...rest } = read
  if ((cert === undefined) !== (key === undefined)) {
    return yield* configError("CLAUDE_RELAY_TLS_CERT and CLAUDE_RELAY_TLS_KEY go together")
  }
  const tls = cert === undefined || key === undefined
    ? undefined
    : { cert: yield* readPem(cert), key: yield* readPem(key) }
  return { ...rest, tls }
})
