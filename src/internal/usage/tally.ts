/**
 * A session's usage fold as one object the reader feeds frame by frame, and the table that
 * gives each `result` frame its `Usage`. The table is filled when the reader sees the result,
 * before anyone can read it, and keyed by the frame itself: the decoded `result` message is
 * that same object.
 *
 * @internal
 */
import type { Usage } from "../../Usage.js"
import * as Fold from "./fold.js"

/**
 * A result's spend: the turn's, and the session's up to and including it.
 *
 * @internal
 */
export interface Settled {
  readonly turn: Usage
  readonly session: Usage
}

const settled = new WeakMap<object, Settled>()

/**
 * What the tally that saw `result` settled for it.
 *
 * @internal
 */
export const settledFor = (result: object): Settled | undefined => settled.get(result)

/**
 * One session's fold.
 *
 * @internal
 */
export class Tally {
  private state: Fold.State = Fold.make()
  /** The session's spend up to the last result. */
  total: Usage = Fold.empty

  /** The fold as of the last frame: the running turn's responses (a budget prices them mid-turn). */
  get current(): Fold.State {
    return this.state
  }

  /** Takes one message frame into account; a `result` closes the turn. */
  observe(frame: { readonly [key: string]: unknown }): void {
    if (frame.type !== "result") {
      this.state = Fold.observe(this.state, frame)
      return
    }
    const { state, usage } = Fold.settle(this.state, frame)
    this.state = state
    this.total = Fold.combine(this.total, usage)
    settled.set(frame, { turn: usage, session: this.total })
  }
}
