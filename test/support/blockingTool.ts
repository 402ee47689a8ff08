// A tool that runs until interrupted, with the two moments a cancellation test waits for.
import { Deferred, Effect, Schema } from "effect"
import * as Tool from "../../src/Tool.js"

export const makeBlockingTool = Effect.gen(function*() {
  const started = yield* Deferred.make<void>()
  const interrupted = yield* Deferred.make<void>()
  const blocking = Tool.make("blocking", {
    description: "Runs until interrupted",
    parameters: Schema.Struct({}),
    handler: () =>
      Deferred.succeed(started, undefined).pipe(
        Effect.zipRight(Effect.never),
        Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined)),
        Effect.as("unreachable")
      )
  })
  return { blocking, started, interrupted }
})
