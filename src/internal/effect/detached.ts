// Running a closing sequence from a finalizer.
//
// A finalizer of an interrupted fiber runs with that interruption pending: any region made
// interruptible inside it (a bounded wait: `Effect.timeout` needs to interrupt what it times) is
// interrupted at once, and the rest of the sequence is skipped. The sequence therefore runs in a
// fiber of its own, which has no pending interruption, and the finalizer waits for it.
import { Effect, Fiber } from "effect"

/** Runs `self` in a daemon fiber and waits for it; for stop sequences inside finalizers. */
export const runDetached = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(Effect.forkDaemon(self), Fiber.join)
