// Process checks shared by the end-to-end tests.
import * as fs from "node:fs"

/** Whether a process with this pid exists (signal 0 checks without sending anything). */
export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Live CLI processes (argv with `stream-json`) started with this HOME; each test has its own. */
export const claudePids = (home: string | undefined): Array<number> => {
  if (home === undefined) return []
  const out: Array<number> = []
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const cmd = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8")
      if (!cmd.includes("stream-json")) continue
      const env = fs.readFileSync(`/proc/${entry}/environ`, "utf8")
      if (env.split("\0").includes(`HOME=${home}`)) out.push(Number(entry))
    } catch {
      // The process ended while we looked.
    }
  }
  return out
}
