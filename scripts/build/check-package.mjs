// Installs the packed package (what `npm publish` would upload) into a temporary directory and runs a
// CommonJS consumer against it (scripts/fixtures/cjs-consumer.cjs). Offline: the peer dependencies
// are symlinks to this checkout's node_modules. Run after `npm run build`.
import { execFileSync } from "node:child_process"
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../..", import.meta.url))
const temp = mkdtempSync(join(tmpdir(), "effect-claude-agent-pack-"))
try {
  const [{ filename }] = JSON.parse(
    execFileSync("npm", ["pack", "--json", "--pack-destination", temp], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] })
  )
  const consumer = join(temp, "consumer")
  const installed = join(consumer, "node_modules", "effect-claude-agent")
  mkdirSync(installed, { recursive: true })
  execFileSync("tar", ["-xzf", join(temp, filename), "-C", installed, "--strip-components=1"])
  for (const name of ["effect", "@effect/platform", "@effect/platform-node"]) {
    mkdirSync(join(consumer, "node_modules", name, ".."), { recursive: true })
    symlinkSync(join(root, "node_modules", name), join(consumer, "node_modules", name), "dir")
  }
  cpSync(join(root, "scripts", "fixtures", "cjs-consumer.cjs"), join(consumer, "consumer.cjs"))
  // Run from elsewhere, so the CLI search finds the consumer's node_modules through the module's
  // location only, not through the working directory.
  const elsewhere = join(temp, "elsewhere")
  mkdirSync(elsewhere)
  execFileSync(process.execPath, [join(consumer, "consumer.cjs")], { cwd: elsewhere, stdio: "inherit" })
} finally {
  rmSync(temp, { recursive: true, force: true })
}
