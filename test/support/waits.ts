// Waits for tests that hold no clock: until a condition holds, or until a sleep is registered
// with the TestClock (so that adjusting the clock then fires it).
import { Chunk, Effect, TestClock } from "effect"

/** Yields to the other fibers until `done` holds (no clock involved). */
export const eventually = (done: () => boolean) => Effect.repeat(Effect.yieldNow(), { until: done })

/** Waits until a sleep of `millis` from now (an idle timer, a pending deadline) is registered with the TestClock. */
export const awaitSleep = (millis: number) =>
  Effect.gen(function*() {
    const now = yield* TestClock.currentTimeMillis
    yield* Effect.repeat(Effect.zipLeft(TestClock.sleeps(), Effect.yieldNow()), {
      until: (sleeps) => Chunk.some(sleeps, (at) => at === now + millis)
    })
  })
