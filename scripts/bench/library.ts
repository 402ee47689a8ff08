// What the in-process bench scripts share (inmemory.ts, steps.ts): the library from src/ through
// tsx, or with --dist (dist/esm, or --dist=DIR relative to the repository) a build of it, and
// their numeric options.
import type * as ClaudeAgentModule from "../../src/ClaudeAgent.js"
import type * as Testing from "../../src/testing/index.js"

const distArg = process.argv.find((a) => a === "--dist" || a.startsWith("--dist="))
const base = distArg === undefined ? "../../src" : `../../${distArg === "--dist" ? "dist/esm" : distArg.slice(7)}`

export const ClaudeAgent: typeof ClaudeAgentModule = await import(`${base}/ClaudeAgent.js`)
// Through the entry point: the build bundles the testing modules behind it.
export const { FakeCli }: typeof Testing = await import(`${base}/testing/index.js`)

/** `--name=N`, else `fallback`. */
export const arg = (name: string, fallback: number): number => {
  const found = process.argv.find((a) => a.startsWith(`--${name}=`))
  return found === undefined ? fallback : Number(found.slice(name.length + 3))
}
