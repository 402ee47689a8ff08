#!/usr/bin/env node
/**
 * The `effect-claude-agent-relay` command: the relay configured from the environment
 * (`Relay.config`). It prints one JSON line with the address once it listens, and runs until
 * SIGINT or SIGTERM, which stop every CLI it started.
 *
 * @since 0.1.0
 */
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Effect } from "effect"
import * as Relay from "./Relay.js"

const main = Effect.scoped(Effect.gen(function*() {
  const config = yield* Relay.config
  const address = yield* Relay.make(config)
  process.stdout.write(`${JSON.stringify({ listening: address.url, port: address.port })}\n`)
  return yield* Effect.never
}))

NodeRuntime.runMain(main.pipe(Effect.provide(NodeContext.layer)))
