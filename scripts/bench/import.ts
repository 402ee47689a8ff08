// The library's own import, on top of `effect` and `@effect/platform-node` (issue #18's target:
// ≤ 50 ms), for the barrel and for `effect-claude-agent/ClaudeAgent` alone, in builds side by side.
//
//   npx tsx scripts/bench/import.ts [--reps=N] [--platform=NodeContext] [--floor] [DIR…]
//
// DIR is a checkout with a build (DIR/dist/esm; default: this one), e.g. main's next to this
// branch's. Each repetition is a fresh Node process that imports effect and the platform, then
// times the one import: wall time and CPU time (user + system, GC threads included), so a loaded
// machine shows in the wall column more than in the CPU one; then the process's RSS. The builds
// and entries are alternated within each round (A, B, A, B, …), and the medians printed with the
// quartiles. `--floor` adds a row for a process that imports `effect` alone, the Effect floor of
// `npm run bench` (whose "RSS after import" row divides the library's RSS, with
// `--platform=NodeContext`, by that one).
import { execFileSync } from "node:child_process"
import { existsSync } from "node:fs"
import { resolve } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { cell } from "./quartiles.js"

const root = fileURLToPath(new URL("../..", import.meta.url))
const argv = process.argv.slice(2)
const reps = Number(argv.find((a) => a.startsWith("--reps="))?.slice("--reps=".length) ?? "21")
const dirs = argv.filter((a) => !a.startsWith("--"))
const checkouts = (dirs.length > 0 ? dirs : [root]).map((dir) => resolve(dir))
// What is loaded before the timed import: the platform's barrel (issue #18's target is "on top of
// effect + @effect/platform-node"), or with --platform=NodeContext only the module the README
// recommends, as `npm run bench` loads it (the library's import then includes the few modules of
// @effect/platform that NodeContext does not load).
const platform = argv.includes("--platform=NodeContext") ? "@effect/platform-node/NodeContext" : "@effect/platform-node"

const probe = [
  "const { performance } = await import(\"node:perf_hooks\")",
  "await import(\"effect\")",
  `await import(${JSON.stringify(platform)})`,
  "const cpu = process.cpuUsage()",
  "const t = performance.now()",
  "await import(process.argv[1])",
  "const wall = performance.now() - t",
  "const used = process.cpuUsage(cpu)",
  "const rss = process.memoryUsage.rss() / 2 ** 20",
  "process.stdout.write(JSON.stringify({ wall, cpu: (used.user + used.system) / 1000, rss }))"
].join("\n")

// The bench's floor: effect, nothing else, its RSS only.
const floorProbe = [
  "await import(\"effect\")",
  "const rss = process.memoryUsage.rss() / 2 ** 20",
  "process.stdout.write(JSON.stringify({ wall: 0, cpu: 0, rss }))"
].join("\n")

interface Target {
  readonly label: string
  readonly checkout: string
  readonly url: string
  readonly wall: Array<number>
  readonly cpu: Array<number>
  readonly rss: Array<number>
}

const targets: Array<Target> = checkouts.flatMap((checkout) =>
  ["index.js", "ClaudeAgent.js"].map((file) => {
    const path = resolve(checkout, "dist", "esm", file)
    if (!existsSync(path)) throw new Error(`import: no ${path} (npm run build there first)`)
    const label = `${checkout} ${file === "index.js" ? "barrel" : "effect-claude-agent/ClaudeAgent"}`
    return { label, checkout, url: pathToFileURL(path).href, wall: [], cpu: [], rss: [] }
  })
)
if (argv.includes("--floor")) {
  targets.push({ label: "floor: effect alone", checkout: root, url: "", wall: [], cpu: [], rss: [] })
}

for (let round = 0; round < reps; round++) {
  for (const target of targets) {
    // From the checkout, so `effect` resolves to the packages that build imports.
    const script = target.url === "" ? floorProbe : probe
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", script, target.url], {
      cwd: target.checkout,
      encoding: "utf8"
    })
    const sample: { wall: number; cpu: number; rss: number } = JSON.parse(out)
    target.wall.push(sample.wall)
    target.cpu.push(sample.cpu)
    target.rss.push(sample.rss)
  }
}

process.stdout.write(`${reps} fresh processes per row, alternated; median (quartiles); platform: ${platform}\n`)
process.stdout.write("| import | wall, ms | CPU, ms | RSS after, MB |\n|---|---|---|---|\n")
for (const target of targets) {
  const times = target.url === "" ? "– | –" : `${cell(target.wall)} | ${cell(target.cpu)}`
  process.stdout.write(`| ${target.label} | ${times} | ${cell(target.rss)} |\n`)
}
