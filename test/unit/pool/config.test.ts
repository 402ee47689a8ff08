// Unit tests of the pool's settings: defaults, and what each setting accepts.
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import * as Config from "../../../src/internal/pool/config.js"

describe("pool settings", () => {
  it.effect("defaults: maxConcurrent as given, 1000 pending, no deadline, no spares, 5 minutes idle, 2 s to shut down", () =>
    Effect.gen(function*() {
      const settings = yield* Config.validate({}, 3)
      expect(settings).toMatchObject({
        maxConcurrent: 3,
        maxPending: 1000,
        pendingTimeout: undefined,
        warm: 0,
        warmOptions: {}
      })
      expect(Duration.toMillis(settings.idleTimeToLive)).toBe(300_000)
      expect(Duration.toMillis(settings.shutdownTimeout)).toBe(2_000)
    }))

  it.effect("zero means something for idleTimeToLive and shutdownTimeout, Infinity for idleTimeToLive and pendingTimeout", () =>
    Effect.gen(function*() {
      const zero = yield* Config.validate(
        { idleTimeToLive: 0, shutdownTimeout: "0 seconds", maxPending: 0, warm: 0 },
        1
      )
      expect([Duration.toMillis(zero.idleTimeToLive), Duration.toMillis(zero.shutdownTimeout), zero.maxPending])
        .toEqual([0, 0, 0])
      const forever = yield* Config.validate({ idleTimeToLive: Infinity, pendingTimeout: Duration.infinity }, 1)
      expect(Duration.isFinite(forever.idleTimeToLive)).toBe(false)
      expect(forever.pendingTimeout !== undefined && Duration.isFinite(forever.pendingTimeout)).toBe(false)
    }))

  it.effect("a wrong value fails with OptionsError naming the field and what it allows", () =>
    Effect.gen(function*() {
      const error = yield* Config.validate({ maxConcurrent: Number("") + Number.NaN }, 1).pipe(Effect.flip)
      expect(error.message).toBe("Invalid option `maxConcurrent`: expected a positive integer; got NaN")
      const idle = yield* Config.validate({ idleTimeToLive: -5 }, 1).pipe(Effect.flip)
      expect(idle).toMatchObject({ _tag: "OptionsError", field: "idleTimeToLive" })
      expect(idle.detail).toContain("zero or a positive duration")
    }))
})
