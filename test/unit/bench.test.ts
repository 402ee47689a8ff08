// `npm run bench -- --smoke`: the benchmark harness end to end at its smallest (every workload,
// warm, one repetition, the library from src/), so a change that breaks a contender, the fake
// CLI or the report is caught here rather than when someone runs the full comparison.
import { describe, expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { contenders, workloads } from "../../scripts/bench/workloads.js"

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
  readonly libraryVsOfficial?: number
  readonly libraryVsRaw?: number
}

const isRows = (value: unknown): value is ReadonlyArray<RowJson> => Array.isArray(value)

describe("bench harness", () => {
  it("--smoke runs every warm workload for all three contenders and writes the table as JSON", async () => {
    const dir = mkdtempSync(join(tmpdir(), "bench-smoke-"))
    try {
      const out = join(dir, "results.json")
      const stdout = await new Promise<string>((resolve, reject) =>
        execFile(process.execPath, [tsx, join(root, "scripts", "bench", "run.ts"), "--smoke", `--out=${out}`], { cwd: root }, (error, text, stderr) =>
          error === null ? resolve(text) : reject(new Error(`${error.message}\n${stderr}`)))
      )
      const json: unknown = JSON.parse(readFileSync(out, "utf8"))
      const rows: unknown = typeof json === "object" && json !== null ? Reflect.get(json, "rows") : undefined
      if (!isRows(rows)) throw new Error("no rows in the JSON")

      const expected = workloads.flatMap((w) =>
        w.modes.includes("warm") ? w.metrics.filter((m) => (m.modes ?? w.modes).includes("warm")).map((m) => `${w.id}/${m.key}`) : []
      )
      expect(rows.map((r) => `${r.workload}/${r.metric}`).sort()).toEqual([...expected].sort())
      for (const row of rows) {
        expect(row.mode).toBe("warm")
        for (const contender of contenders) {
          const stat = row.stats[contender]
          expect(stat?.n, `${row.workload}/${row.metric}/${contender}`).toBe(1)
          expect(Number.isFinite(stat?.median), `${row.workload}/${row.metric}/${contender}`).toBe(true)
        }
        expect(row.libraryVsOfficial).toBeGreaterThan(0)
        expect(row.libraryVsRaw).toBeGreaterThan(0)
      }
      // The printed table has one line per row, after the header and its rule.
      expect(stdout.split("\n").filter((line) => line.startsWith("| ")).length).toBe(rows.length + 1)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})
