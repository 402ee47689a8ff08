// The relay's configuration: read from the environment as the bin reads it, and refused when it
// would start an insecure or useless relay (before anything listens).
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Redacted } from "effect"
import { Relay } from "effect-claude-agent/relay"

const fromEnv = (env: Record<string, string>) =>
  Relay.config.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))

describe("Relay.config and Relay.make", () => {
  it.effect("reads the environment: lists split on commas, defaults for the rest, the token redacted", () =>
    Effect.gen(function*() {
      const config = yield* fromEnv({
        CLAUDE_RELAY_TOKEN: "0123456789abcdef",
        CLAUDE_RELAY_ROOTS: "/workspace,/data",
        CLAUDE_RELAY_ALLOW_ENV: "ANTHROPIC_API_KEY",
        CLAUDE_RELAY_PORT: "0",
        CLAUDE_RELAY_HEARTBEAT: "5 seconds"
      })
      expect(config.allowedRoots).toEqual(["/workspace", "/data"])
      expect(config.allowedEnv).toEqual(["ANTHROPIC_API_KEY"])
      expect(config.port).toBe(0)
      expect(config.host).toBe("127.0.0.1")
      expect(config.tls).toBeUndefined()
      expect(Redacted.value(config.token)).toBe("0123456789abcdef")
      expect(String(config.token)).not.toContain("0123456789abcdef")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("a missing token, or a certificate without its key, is a RelayError (Config)", () =>
    Effect.gen(function*() {
      const noToken = yield* Effect.flip(fromEnv({ CLAUDE_RELAY_ROOTS: "/workspace" }))
      expect(noToken).toMatchObject({ _tag: "RelayError", reason: "Config" })
      expect(noToken.description).toContain("CLAUDE_RELAY_TOKEN")
      const halfTls = yield* Effect.flip(fromEnv({
        CLAUDE_RELAY_TOKEN: "0123456789abcdef",
        CLAUDE_RELAY_ROOTS: "/workspace",
        CLAUDE_RELAY_TLS_CERT: "/certs/cert.pem"
      }))
      expect(halfTls).toMatchObject({ _tag: "RelayError", reason: "Config" })
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("make refuses a short token and an empty list of roots before listening", () =>
    Effect.gen(function*() {
      const short = yield* Effect.flip(Relay.make({ token: Redacted.make("short"), allowedRoots: ["/tmp"], port: 0 }))
      expect(short).toMatchObject({ _tag: "RelayError", reason: "Config" })
      const noRoots = yield* Effect.flip(
        Relay.make({ token: Redacted.make("0123456789abcdef"), allowedRoots: [], port: 0 })
      )
      expect(noRoots).toMatchObject({ _tag: "RelayError", reason: "Config" })
    }).pipe(Effect.provide(NodeContext.layer)))
})
