// Authentication between cluster processes: a runner process (scripts/cluster/runner.ts) holding
// the run's AGENT_CLUSTER_SECRET, this process as a client-only node holding it too, and rogue
// peers in this process that know only the runner's address. The rogues get no reply and change
// nothing, the runner logs the refused host once, and the client node keeps working. A runner
// process without a usable secret does not start.
import { Sharding } from "@effect/cluster"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { clientLayer, pgLayer, Probe, testTimings } from "../../scripts/cluster/layers.js"
import { AgentEntity } from "../../src/cluster/index.js"
import * as Handshake from "../../src/cluster/internal/handshake.js"
import { attack, connect, key, openWith, readBytes, rogue } from "../unit/cluster/rogue.js"
import { databaseUrl, eventually, startRunner } from "./harness.js"

const secret = process.env.AGENT_CLUSTER_SECRET ?? ""

describe("cluster on PostgreSQL: runners authenticate their peers", () => {
  it.scopedLive("rogue peers get nothing from a runner process; the client node with the secret works", () =>
    Effect.gen(function*() {
      expect(secret.length).toBeGreaterThanOrEqual(32)
      const url = yield* databaseUrl
      const prefix = `auth_${Date.now().toString(36)}`
      const runner = yield* startRunner({ env: { DATABASE_URL: url, CLUSTER_PREFIX: prefix, CLUSTER_TIMINGS: "test" } })
      const port = Number(runner.address.split(":")[1])

      const client = yield* Layer.build(
        clientLayer({ prefix, shardingConfig: testTimings }).pipe(Layer.provide(pgLayer(url)))
      )
      const sharding = yield* Effect.provide(Sharding.Sharding, client)
      const probe = yield* Effect.provide(Probe.client, client)
      const conversation = (yield* Effect.provide(AgentEntity.AgentEntity.client, client))("auth-1")
      yield* eventually(
        Effect.filterOrFail(probe("auth-1").Where().pipe(Effect.timeout("3 seconds")), (at) => at === runner.address),
        { within: "30 seconds", describe: () => `the runner never answered:\n${runner.output()}` }
      )
      const before = yield* conversation.Status()
      expect(before).toMatchObject({ model: null, busy: false, turns: 0, running: false })

      const recorded = yield* Effect.gen(function*() {
        const conn = yield* connect(port)
        const serverNonce = Handshake.parseHello(yield* readBytes(conn, Handshake.HELLO_BYTES)) ?? new Uint8Array()
        const response = Handshake.respond(Redacted.value(key(secret)), serverNonce, Handshake.nonce())
        conn.write(response)
        expect(yield* readBytes(conn, Handshake.CONFIRM_BYTES)).toHaveLength(Handshake.CONFIRM_BYTES)
        conn.destroy()
        return response
      })
      const rogues = {
        noKey: yield* rogue(connect(port)),
        wrongKey: yield* rogue(
          openWith(port, (hello) =>
            Handshake.respond(
              Redacted.value(key(randomBytes(32).toString("base64"))),
              hello.subarray(4),
              Handshake.nonce()
            ))
        ),
        replay: yield* rogue(openWith(port, () => recorded))
      }
      for (const peer of Object.values(rogues)) {
        expect(yield* attack(peer, sharding, "auth-1", "rogue turn")).toEqual({
          status: undefined,
          model: undefined,
          permission: undefined,
          turn: undefined
        })
      }

      const after = yield* conversation.Status()
      expect(after).toMatchObject({ model: null, busy: false, turns: 0, running: false })
      expect(yield* probe("auth-1").Where()).toBe(runner.address)
      // Several refused connections from one host, one warning in the runner's log.
      const warnings = runner.output().split("\n").filter((line) => /\bWARN\b.*cluster handshake/.test(line))
      expect(warnings).toHaveLength(1)
      expect(warnings[0]).toContain("127.0.0.1")
    }))

  it.scopedLive("a runner process with a secret shorter than 32 bytes does not start", () =>
    Effect.gen(function*() {
      const url = yield* databaseUrl
      const started = yield* Effect.exit(startRunner({
        env: { DATABASE_URL: url, CLUSTER_PREFIX: `auth_${Date.now().toString(36)}`, AGENT_CLUSTER_SECRET: "too short" }
      }))
      expect(Exit.isFailure(started)).toBe(true)
      expect(String(Exit.isFailure(started) ? started.cause : "")).toContain("ClusterSecretError")
    }))
})
