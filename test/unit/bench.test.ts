// `npm run bench -- --smoke`: the benchmark harness end to end at its smallest (every workload,
// warm, one repetition, the library from src/), so a change that breaks a contender, the fake
// CLI or the report is caught here rather than when someone runs the full comparison.
import { describe, expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { defaultContenders, workloads } from "../../scripts/bench/workloads.js"

const root = fileURLToPath(new URL("../..", import.meta.url))
const tsx = join(root, "node_modules", "tsx", "dist", "cli.mjs")

interface StatJson {
  readonly median: number
  readonly n: number
}
interface RowJson {
  readonly workload: string
  readonly metric: string
  readonly mode: string
  readonly stats: Readonly<Record<string, StatJson>>
  readonly libraryVsFloor?: number
  readonly floorVsOfficial?: number
  readonly libraryVsOfficial?: number
  readonly libraryVsRaw?: number
  readonly libraryVsBaseline?: number
}

const isRows = (value: unknown): value is ReadonlyArray<RowJson> => Array.isArray(value)

const runBench = (args: ReadonlyArray<string>) =>
  new Promise<{ readonly error: Error | null; readonly stdout: string; readonly stderr: string }>((resolve) =>
    execFile(
      process.execPath,
      [tsx, join(root, "scripts", "bench", "run.ts"), ...args],
      { cwd: root },
      (error, stdout, stderr) => resolve({ error, stdout, stderr })
    )
  )

describe("bench harness", () => {
  it(
    "--smoke runs every warm workload for the four default contenders and writes the table as JSON and Markdown",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "bench-smoke-"))
      try {
        const out = join(dir, "results.json")
        const markdown = join(dir, "results.md")
        const run = await runBench(["--smoke", `--out=${out}`, `--markdown=${markdown}`])
        if (run.error !== null) throw new Error(`${run.error.message}\n${run.stderr}`)
        const stdout = run.stdout
        const json: unknown = JSON.parse(readFileSync(out, "utf8"))
        const rows: unknown = typeof json === "object" && json !== null ? Reflect.get(json, "rows") : undefined
        if (!isRows(rows)) throw new Error("no rows in the JSON")

        const expected = workloads.flatMap((w) =>
          w.modes.includes("warm")
            ? w.metrics.filter((m) => (m.modes ?? w.modes).includes("warm")).map((m) => `${w.id}/${m.key}`)
            : []
        )
        expect(rows.map((r) => `${r.workload}/${r.metric}`).sort()).toEqual([...expected].sort())
        for (const row of rows) {
          expect(row.mode).toBe("warm")
          // The baseline runs only with --baseline.
          expect(row.stats.baseline).toBeUndefined()
          for (const contender of defaultContenders) {
            const stat = row.stats[contender]
            expect(stat?.n, `${row.workload}/${row.metric}/${contender}`).toBe(1)
            expect(Number.isFinite(stat?.median), `${row.workload}/${row.metric}/${contender}`).toBe(true)
          }
          expect(row.libraryVsFloor).toBeGreaterThan(0)
          expect(row.floorVsOfficial).toBeGreaterThan(0)
          expect(row.libraryVsOfficial).toBeGreaterThan(0)
          expect(row.libraryVsRaw).toBeGreaterThan(0)
        }
        // The printed table has one line per row, after the header and its rule; the Markdown file
        // holds the same report.
        const tableLines = stdout.split("\n").filter((line) => line.startsWith("| "))
        expect(tableLines.length).toBe(rows.length + 1)
        expect(tableLines[0]).toContain("| Effect floor |")
        expect(tableLines[0]).toContain("| lib / floor | floor / official | lib / official |")
        expect(readFileSync(markdown, "utf8")).toBe(stdout)
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    },
    120_000
  )

  it(
    "refuses the baseline contender without --baseline, or a --baseline without a build, before running anything",
    async () => {
      const missing = await runBench(["--smoke", "--contenders=library,baseline"])
      expect(missing.error).not.toBeNull()
      expect(missing.stderr).toContain("needs --baseline=DIR")
      const dir = mkdtempSync(join(tmpdir(), "bench-baseline-"))
      try {
        const unbuilt = await runBench(["--smoke", `--baseline=${dir}`])
        expect(unbuilt.error).not.toBeNull()
        expect(unbuilt.stderr).toContain(`--baseline: no ${join(dir, "dist", "esm", "index.js")}`)
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    },
    60_000
  )
})
