// What the in-process bench scripts share (inmemory.ts, steps.ts): the library from src/ through
// tsx, or with --dist (dist/esm, or --dist=DIR: absolute, or relative to the repository; a build's
// root or its dist/esm) a build of it, and their numeric options.
import { existsSync } from "node:fs"
import { isAbsolute, resolve } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import type * as ClaudeAgentModule from "../../src/ClaudeAgent.js"
import type * as Testing from "../../src/testing/index.js"

const distArg = process.argv.find((a) => a === "--dist" || a.startsWith("--dist="))
const repo = fileURLToPath(new URL("../..", import.meta.url))
const distDir = (dir: string): string => {
  const full = isAbsolute(dir) ? dir : resolve(repo, dir)
  // A build's root (with dist/esm inside) or dist/esm itself.
  return existsSync(resolve(full, "dist/esm/ClaudeAgent.js")) ? resolve(full, "dist/esm") : full
}
const base = distArg === undefined
  ? "../../src"
  : pathToFileURL(distDir(distArg === "--dist" ? "dist/esm" : distArg.slice(7))).href

export const ClaudeAgent: typeof ClaudeAgentModule = await import(`${base}/ClaudeAgent.js`)
// Through the entry point: the build bundles the testing modules behind it.
export const { FakeCli }: typeof Testing = await import(`${base}/testing/index.js`)

/** `--name=N`, else `fallback`. */
export const arg = (name: string, fallback: number): number => {
  const found = process.argv.find((a) => a.startsWith(`--${name}=`))
  return found === undefined ? fallback : Number(found.slice(name.length + 3))
}
