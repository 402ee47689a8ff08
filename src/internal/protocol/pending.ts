/**
 * The table of requests the host sent and the CLI has not answered yet, as data: request id →
 * subtype, deadline (a number the shell computed from its own clock) and whatever the shell waits
 * on. It makes the request ids, matches replies to their requests and hands every entry back at
 * once when the connection ends. Plain TypeScript: no Effect, no timers.
 *
 * @internal
 */
import type { Route } from "./router.js"

/**
 * One pending request.
 *
 * @internal
 */
export interface Entry<W> {
  readonly requestId: string
  readonly subtype: string
  /** When the request times out, in the shell's clock's milliseconds; `undefined`: never. */
  readonly deadline: number | undefined
  /** What the shell completes when the request ends. */
  readonly waiter: W
}

/**
 * What a reply does to its pending request.
 *
 * - `Succeeded`: the reply's `response` (absent: `undefined`) and its envelope.
 * - `Failed`: the CLI's error and error code.
 * - `Unreadable`: a reply this version cannot read; `response` is what it held.
 *
 * @internal
 */
export type Outcome<W> =
  | {
    readonly _tag: "Succeeded"
    readonly entry: Entry<W>
    readonly response: unknown
    readonly envelope: { readonly [key: string]: unknown }
  }
  | {
    readonly _tag: "Failed"
    readonly entry: Entry<W>
    readonly error: string
    readonly errorCode: string | undefined
  }
  | { readonly _tag: "Unreadable"; readonly entry: Entry<W>; readonly response: unknown }

/**
 * The pending requests of one channel.
 *
 * @internal
 */
export class PendingTable<W> {
  private readonly entries = new Map<string, Entry<W>>()
  private counter = 0

  constructor(
    /** The random part of request ids: ids stay unique across channels and processes. */
    private readonly random: () => number = Math.random
  ) {}

  /** A fresh request id, unique within this table (a counter) and unlikely to repeat elsewhere. */
  nextId(): string {
    return `req_${++this.counter}_${this.random().toString(36).slice(2, 10)}`
  }

  /** Records a request as waiting for its reply. */
  add(requestId: string, subtype: string, deadline: number | undefined, waiter: W): Entry<W> {
    const entry: Entry<W> = { requestId, subtype, deadline, waiter }
    this.entries.set(requestId, entry)
    return entry
  }

  /** Forgets a request (answered, timed out or interrupted); `true` when it was pending. */
  remove(requestId: string): boolean {
    return this.entries.delete(requestId)
  }

  get size(): number {
    return this.entries.size
  }

  has(requestId: string): boolean {
    return this.entries.has(requestId)
  }

  /**
   * What a routed reply does: the outcome for its request, which is no longer pending, or
   * `undefined` when it answers nothing pending (an unknown or already answered id, a reply
   * without an id, or a frame that is not a reply).
   */
  resolve(route: Route): Outcome<W> | undefined {
    switch (route._tag) {
      case "Success": {
        const entry = this.take(route.requestId)
        return entry && { _tag: "Succeeded", entry, response: route.response, envelope: route.envelope }
      }
      case "Failure": {
        const entry = this.take(route.requestId)
        return entry && { _tag: "Failed", entry, error: route.error, errorCode: route.errorCode }
      }
      case "MalformedResponse": {
        const entry = route.requestId === undefined ? undefined : this.take(route.requestId)
        return entry && { _tag: "Unreadable", entry, response: route.response }
      }
      default:
        return undefined
    }
  }

  /** The earliest deadline of the pending requests; `undefined` when none has one. */
  nextDeadline(): number | undefined {
    let next: number | undefined
    for (const entry of this.entries.values()) {
      if (entry.deadline !== undefined && (next === undefined || entry.deadline < next)) next = entry.deadline
    }
    return next
  }

  /** The requests whose deadline is at or before `now`, no longer pending. */
  expire(now: number): Array<Entry<W>> {
    const expired: Array<Entry<W>> = []
    for (const entry of this.entries.values()) {
      if (entry.deadline !== undefined && entry.deadline <= now) expired.push(entry)
    }
    for (const entry of expired) this.entries.delete(entry.requestId)
    return expired
  }

  /** Every pending request, no longer pending: the connection ended. */
  drain(): Array<Entry<W>> {
    const all = Array.from(this.entries.values())
    this.entries.clear()
    return all
  }

  private take(requestId: string): Entry<W> | undefined {
    const entry = this.entries.get(requestId)
    if (entry !== undefined) this.entries.delete(requestId)
    return entry
  }
}
