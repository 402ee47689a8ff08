// The runtime steps and fibers a program runs, counted by a `Supervisor` (run the program with
// `RuntimeFlags.OpSupervision` for the steps): shared by steps.ts (the library's sessions),
// floorSteps.ts (the floors') and messages.ts.
import { Effect, Supervisor } from "effect"

export class StepCounter extends Supervisor.AbstractSupervisor<void> {
  fibers = 0
  steps = 0
  get value() {
    return Effect.void
  }
  override onStart() {
    this.fibers++
  }
  override onEffect() {
    this.steps++
  }
}
