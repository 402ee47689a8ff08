// Adds the optional platform packages npm 11 leaves out of package-lock.json (npm/cli#4828),
// without which `npm ci` refuses the lockfile ("Missing: @rollup/rollup-… from lock file").
// Run after any `npm install` that changes the lockfile:  node scripts/build/complete-lockfile.mjs
import { execFileSync } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"

const path = new URL("../../package-lock.json", import.meta.url)
const lock = JSON.parse(readFileSync(path, "utf8"))
const packages = lock.packages

const resolves = (from, name) => {
  // Walk up the node_modules chain from `from`, as Node's resolution does.
  let dir = from
  for (;;) {
    if (packages[`${dir === "" ? "" : `${dir}/`}node_modules/${name}`] !== undefined) return true
    if (dir === "") return false
    const i = dir.lastIndexOf("/node_modules/")
    dir = i < 0 ? "" : dir.slice(0, i)
  }
}

const view = (name, range) => {
  try {
    const out = JSON.parse(
      execFileSync("npm", ["view", `${name}@${range}`, "version", "dist.integrity", "os", "cpu", "libc", "engines", "--json"], {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"]
      })
    )
    return Array.isArray(out) ? out[out.length - 1] : out
  } catch {
    return undefined
  }
}

// Some registries (mirrors) lack other platforms' builds. npm ci never fetches a package whose
// os/cpu do not match the machine, so an entry with the platform read off its name is enough.
const fromName = (name, range) => {
  const parts = name.split("/").pop().split("-")
  const os = ["darwin", "linux", "win32", "android", "freebsd", "openbsd", "sunos", "aix", "netbsd", "openharmony"].find((o) => parts.includes(o))
  const cpu = ["x64", "arm64", "arm", "ia32", "loong64", "ppc64", "riscv64", "s390x", "mips64el"].find((c) => parts.some((p) => p === c || p.startsWith(c)))
  const libc = parts.includes("musl") || parts.includes("musleabihf") ? ["musl"] : parts.includes("gnu") || parts.includes("gnueabihf") ? ["glibc"] : undefined
  if (os === undefined || cpu === undefined || !/^\d+\.\d+\.\d+$/.test(range)) {
    throw new Error(`complete-lockfile: cannot resolve ${name}@${range} from the registry or its name`)
  }
  return { version: range, os: [os], cpu: [cpu], ...(libc === undefined ? {} : { libc }) }
}

let added = 0
for (const [at, entry] of Object.entries(packages)) {
  for (const [name, range] of Object.entries(entry.optionalDependencies ?? {})) {
    if (resolves(at, name)) continue
    const meta = view(name, range) ?? fromName(name, range)
    const record = { version: meta.version, optional: true }
    if (meta["dist.integrity"] !== undefined) record.integrity = meta["dist.integrity"]
    for (const key of ["cpu", "os", "libc", "engines"]) if (meta[key] !== undefined) record[key] = meta[key]
    packages[`node_modules/${name}`] = record
    added++
  }
}
lock.packages = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a < b ? -1 : 1)))
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`)
process.stdout.write(`complete-lockfile: added ${added} optional package entries\n`)
