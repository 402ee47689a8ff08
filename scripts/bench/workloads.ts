// The benchmark's workloads and metrics, shared by the orchestrator (run.ts) and the worker
// processes (worker.ts). Sizes follow issue #10's table; `scale` shrinks the counts for the
// quick and smoke modes (never the message sizes).

/**
 * Who consumes the fake CLI: this library, the Effect floor (the least Effect code doing the
 * library's job, issue #18), the protocol floor (the Effect floor plus the protocol work every
 * session needs: request table, deadlines, close sequence, process group, spans; optional), the
 * official SDK, hand-written Node code, or the library built from another checkout
 * (`--baseline=DIR`, to compare a change with main back to back).
 */
export type Contender = "library" | "floor" | "protocolFloor" | "official" | "raw" | "baseline"
export const contenders: ReadonlyArray<Contender> = ["library", "floor", "protocolFloor", "official", "raw", "baseline"]
/** The contenders that run without options (the baseline needs `--baseline=DIR`; the protocol floor is asked for). */
export const defaultContenders: ReadonlyArray<Contender> = ["library", "floor", "official", "raw"]

/** `cold`: one repetition per fresh process; `warm`: repetitions in one process, after a warm-up. */
export type Mode = "cold" | "warm"

export type WorkloadId =
  | "flood1k"
  | "chunked4k"
  | "flood100k"
  | "line900k"
  | "hooks"
  | "mcp"
  | "hooks10k"
  | "setup"
  | "firstQuery"
  | "concurrent"

export interface Metric {
  readonly key: string
  readonly label: string
  /** "higher" when a bigger number is better (rates), "lower" for times, CPU and memory. */
  readonly better: "higher" | "lower"
  readonly digits: number
  /** Issue #10's target for library / official (≥ for "higher", ≤ for "lower"). */
  readonly targetVsOfficial?: number
  /** Issue #10's target for library / raw, warm only. */
  readonly targetVsRawWarm?: number
  /**
   * Issue #18's target for library / Effect floor: every row ≤ 1.2× the floor's cost (≥ 1 / 1.2
   * of its rate), session set-up ≤ 1.5×. Absent where the floor has nothing to compare.
   */
  readonly targetVsFloor?: number
  /** Only measured in these modes (default: the workload's). */
  readonly modes?: ReadonlyArray<Mode>
}

export interface Workload {
  readonly id: WorkloadId
  readonly title: string
  readonly modes: ReadonlyArray<Mode>
  readonly metrics: ReadonlyArray<Metric>
}

const FLOOR = 1.2
const throughput = (label: string): Metric => ({
  key: "msgsPerSec",
  label,
  better: "higher",
  digits: 0,
  targetVsOfficial: 1,
  targetVsRawWarm: 0.8,
  targetVsFloor: 1 / FLOOR
})
const cpuPerMsg: Metric = {
  key: "cpuUsPerMsg",
  label: "CPU µs per message",
  better: "lower",
  digits: 1,
  targetVsOfficial: 1,
  targetVsFloor: FLOOR
}

export const workloads: ReadonlyArray<Workload> = [
  {
    id: "flood1k",
    title: "20k × 1 KB messages",
    modes: ["cold", "warm"],
    metrics: [
      throughput("msgs/s"),
      cpuPerMsg,
      {
        key: "rssGrowthMb",
        label: "peak RSS growth over import, MB",
        better: "lower",
        digits: 1,
        targetVsOfficial: 1.2,
        targetVsFloor: FLOOR,
        modes: ["cold"]
      }
    ]
  },
  {
    id: "chunked4k",
    title: "20k × 1 KB in 4 KB stdout chunks",
    modes: ["cold", "warm"],
    metrics: [throughput("msgs/s"), cpuPerMsg]
  },
  {
    id: "flood100k",
    title: "200 × 100 KB messages",
    modes: ["cold", "warm"],
    metrics: [
      {
        key: "mbPerSec",
        label: "MB/s",
        better: "higher",
        digits: 0,
        targetVsOfficial: 1,
        targetVsRawWarm: 0.8,
        targetVsFloor: 1 / FLOOR
      },
      {
        key: "cpuMsPerMb",
        label: "CPU ms per MB",
        better: "lower",
        digits: 2,
        targetVsOfficial: 1,
        targetVsFloor: FLOOR
      }
    ]
  },
  {
    id: "line900k",
    title: "one 900 KB line",
    modes: ["cold", "warm"],
    metrics: [{
      key: "deliveredMs",
      label: "init → delivered, ms",
      better: "lower",
      digits: 2,
      targetVsOfficial: 1,
      targetVsRawWarm: 1.25,
      targetVsFloor: FLOOR
    }]
  },
  {
    id: "hooks",
    title: "hook round trip (2000 sequential)",
    modes: ["cold", "warm"],
    metrics: [
      {
        key: "p50Us",
        label: "p50 µs (CLI clock)",
        better: "lower",
        digits: 0,
        targetVsOfficial: 1,
        targetVsFloor: FLOOR
      },
      {
        key: "cpuUsPerRt",
        label: "CPU µs per round trip",
        better: "lower",
        digits: 0,
        targetVsOfficial: 1,
        targetVsFloor: FLOOR
      }
    ]
  },
  {
    id: "mcp",
    title: "SDK MCP tools/call round trip (2000 sequential)",
    modes: ["cold", "warm"],
    metrics: [
      {
        key: "p50Us",
        label: "p50 µs (CLI clock)",
        better: "lower",
        digits: 0,
        targetVsOfficial: 1,
        targetVsFloor: FLOOR
      },
      {
        key: "cpuUsPerRt",
        label: "CPU µs per round trip",
        better: "lower",
        digits: 0,
        targetVsOfficial: 1,
        targetVsFloor: FLOOR
      }
    ]
  },
  {
    id: "hooks10k",
    title: "10k hook round trips, 64 in flight",
    modes: ["cold", "warm"],
    metrics: [
      {
        key: "rtPerSec",
        label: "round trips/s",
        better: "higher",
        digits: 0,
        targetVsOfficial: 1,
        targetVsFloor: 1 / FLOOR
      },
      {
        key: "cpuUsPerRt",
        label: "CPU µs per round trip",
        better: "lower",
        digits: 0,
        targetVsOfficial: 1,
        targetVsFloor: FLOOR
      }
    ]
  },
  {
    id: "setup",
    title: "session set-up (trivial one-message query, 20 in a row)",
    modes: ["cold", "warm"],
    metrics: [
      {
        key: "cpuMsPerSession",
        label: "CPU ms per session",
        better: "lower",
        digits: 2,
        targetVsOfficial: 1.5,
        targetVsFloor: 1.5
      },
      { key: "wallMsPerSession", label: "wall ms per session", better: "lower", digits: 1, targetVsFloor: 1.5 }
    ]
  },
  {
    id: "firstQuery",
    title: "cold first query",
    modes: ["cold"],
    metrics: [
      {
        key: "firstMessageMs",
        label: "query() → first message, ms",
        better: "lower",
        digits: 1,
        targetVsOfficial: 1.2,
        targetVsFloor: FLOOR
      },
      { key: "importMs", label: "import, ms (info)", better: "lower", digits: 0 },
      { key: "importRssMb", label: "RSS after import, MB", better: "lower", digits: 1, targetVsFloor: FLOOR },
      {
        key: "ownImportMs",
        label: "library's own import on top of effect + NodeContext, ms (target ≤ 50)",
        better: "lower",
        digits: 0
      },
      { key: "ownImportCpuMs", label: "the same, CPU ms", better: "lower", digits: 0 },
      {
        key: "ownSubpathImportMs",
        label: "`effect-claude-agent/ClaudeAgent` alone on top of effect + NodeContext, ms",
        better: "lower",
        digits: 0
      },
      { key: "ownSubpathImportCpuMs", label: "the same, CPU ms", better: "lower", digits: 0 }
    ]
  },
  {
    id: "concurrent",
    title: "8 concurrent sessions × 5000 messages",
    modes: ["cold", "warm"],
    metrics: [
      {
        key: "wallMs",
        label: "wall ms (spawn → all done)",
        better: "lower",
        digits: 0,
        targetVsOfficial: 1,
        targetVsFloor: FLOOR
      },
      {
        key: "msgsPerSec",
        label: "aggregate msgs/s",
        better: "higher",
        digits: 0,
        targetVsOfficial: 1,
        targetVsFloor: 1 / FLOOR
      }
    ]
  }
]

/** What the worker is asked to run. */
export interface Job {
  readonly workload: WorkloadId
  readonly mode: Mode
  readonly scale: number
}

/** Metric key → value for one repetition. */
export type Sample = Readonly<Record<string, number>>

/** Messages between run.ts and a worker (over the IPC channel). */
export type ToWorker = { readonly type: "job"; readonly job: Job }
export type FromWorker =
  | { readonly type: "ready" }
  | { readonly type: "result"; readonly sample: Sample }
  | { readonly type: "error"; readonly message: string }

/** The counts of each workload at a scale (sizes never change). */
export const sizes = (scale: number) => {
  const n = (full: number, min: number) => Math.max(min, Math.round(full * scale))
  return {
    flood1k: { count: n(20_000, 200), size: 1024 },
    flood100k: { count: n(200, 4), size: 100 * 1024 },
    line900k: { count: 1, size: 900_000 },
    hooks: { count: n(2_000, 20) },
    mcp: { count: n(2_000, 20) },
    hooks10k: { count: n(10_000, 100), window: 64 },
    setup: { sessions: n(20, 2) },
    // Smoke runs (scale < 0.1) open 2 sessions: 8 × 4 contenders of process starts is most of their time.
    concurrent: { sessions: scale < 0.1 ? 2 : 8, count: n(5_000, 50), size: 1024 }
  }
}
