/**
 * A last line of defence against orphaned CLI processes.
 *
 * Scope finalizers do not run when the host exits without Effect's runtime shutting down (a
 * plain `process.exit`, an uncaught exception, `Effect.runPromise` under SIGINT). The CLI runs in
 * its own process group, so nothing would reach it; this synchronous exit hook kills every group
 * still registered.
 *
 * @internal
 */

const live = new Set<number>()
let installed = false

interface ProcessLike {
  readonly once: (event: "exit", listener: () => void) => unknown
  readonly kill: (pid: number, signal: string) => unknown
  readonly platform: string
}

const isProcessLike = (u: unknown): u is ProcessLike =>
  typeof u === "object" && u !== null && "once" in u && typeof u.once === "function" &&
  "kill" in u && typeof u.kill === "function" && "platform" in u && typeof u.platform === "string"

const install = (): void => {
  if (installed) return
  const proc: unknown = Reflect.get(globalThis, "process")
  if (!isProcessLike(proc)) return
  installed = true
  proc.once("exit", () => {
    for (const pid of live) {
      try {
        proc.kill(proc.platform === "win32" ? pid : -pid, "SIGKILL")
      } catch {
        // Already gone.
      }
    }
  })
}

/**
 * Remembers a live CLI process; returns the function that forgets it.
 *
 * @internal
 */
export const register = (pid: number): () => void => {
  install()
  live.add(pid)
  return () => {
    live.delete(pid)
  }
}
