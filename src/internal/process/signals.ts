/**
 * Ending the CLI and what it started.
 *
 * @internal
 */
import { type ChildProcess, execFile } from "node:child_process"

/**
 * Whether this is Windows: no process groups, no signals.
 *
 * @internal
 */
export const isWindows = process.platform === "win32"

/**
 * Sends `signal` to the process group (the CLI and what it started), else to the process. Windows
 * has neither groups nor signals: the process tree is ended with `taskkill /T /F`, as the
 * platform's `Command` did.
 *
 * @internal
 */
export const signalGroup = (child: ChildProcess, pid: number, signal: NodeJS.Signals): void => {
  if (isWindows) {
    execFile("taskkill", ["/pid", String(pid), "/T", "/F"], { windowsHide: true }, (error) => {
      if (error !== null) child.kill(signal)
    })
    return
  }
  try {
    process.kill(-pid, signal)
    return
  } catch {
    // No group (already gone): the process itself below.
  }
  try {
    child.kill(signal)
  } catch {
    // Already gone.
  }
}
