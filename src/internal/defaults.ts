// The library's defaults, in one place: the README's options table and the TSDoc quote these.
import { Duration } from "effect"

/** Largest stdout line, in bytes (`maxBufferSize`). */
export const maxBufferSize = 1024 * 1024

/** Deadline of a control request (`controlTimeout`). */
export const controlTimeout: Duration.Duration = Duration.seconds(60)

/** Wait after stdin EOF before SIGTERM, and after SIGTERM before SIGKILL (`closeGracePeriod`). */
export const closeGracePeriod: Duration.Duration = Duration.seconds(5)

/** How much of the CLI's stderr is kept for `ProcessError`, in bytes. */
export const stderrTailBytes = 2048

/** Bytes of messages queued for a slow consumer before the reader waits (`messageBufferBytes`). */
export const messageBufferBytes = 64 * 1024 * 1024
