/**
 * `AgentMetrics`: what a cluster of agent runners reports through Effect's `Metric`, beside the
 * SDK's own (`Telemetry`: turns, tokens, pool waits `claude_agent_pool_wait_ms` and
 * `claude_agent_pool_pending`) and `@effect/cluster`'s (`effect_cluster_*`: entities, shards,
 * runners). Export them with `@effect/opentelemetry` (or read them with `Metric.value`).
 *
 * @since 0.1.0
 */
import { Metric, MetricBoundaries } from "effect"

/**
 * Turns taken over by a runner from another one, tagged with `reason`: `runner_stopped` (the
 * turn was cut short on its previous runner and runs again from its prompt) or `reply_replayed`
 * (the `SessionStore` has recorded the turn: it had completed there, or its id was sent again
 * later, and its unread messages are replayed from the store without running it again), and with
 * `runner` (host:port of the runner that took it over).
 *
 * @example
 * ```ts
 * import { Effect, Metric } from "effect"
 * import { AgentMetrics } from "effect-claude-agent/cluster"
 *
 * const reruns = Effect.map(
 *   Metric.value(AgentMetrics.turnTakeovers.pipe(Metric.tagged("reason", "runner_stopped"))),
 *   (state) => state.count
 * )
 * ```
 *
 * @since 0.1.0
 * @category metrics
 */
export const turnTakeovers: Metric.Metric.Counter<number> = Metric.counter("claude_agent_cluster_turn_takeovers", {
  description: "Turns in flight taken over from another runner, by reason (runner_stopped: run again; reply_replayed)",
  incremental: true
})

/**
 * How long a taken-over turn went without a runner, in milliseconds: from the last reply chunk
 * its previous runner stored to the new runner starting it again. Includes the previous runner's
 * last quiet stretch (a tool running), so it is an upper bound of the failover time; with the
 * defaults most of it is `shardLockExpiration` and one message poll.
 *
 * @example
 * ```ts
 * import { Effect, Metric } from "effect"
 * import { AgentMetrics } from "effect-claude-agent/cluster"
 *
 * const takeovers = Effect.map(Metric.value(AgentMetrics.takeoverTime), (state) => state.count)
 * ```
 *
 * @since 0.1.0
 * @category metrics
 */
export const takeoverTime = Metric.histogram(
  "claude_agent_cluster_takeover_ms",
  MetricBoundaries.exponential({ start: 50, factor: 2, count: 14 }),
  "Time a taken-over turn went without a runner, in milliseconds"
)

/**
 * Turns a runner has accepted that wait for their conversation's turn before them, tagged with
 * `runner` (host:port). A conversation runs one turn at a time; this is the runner's backlog.
 *
 * @example
 * ```ts
 * import { Effect, Metric } from "effect"
 * import { AgentMetrics } from "effect-claude-agent/cluster"
 *
 * const backlog = Effect.map(Metric.value(AgentMetrics.turnsQueued), (state) => state.value)
 * ```
 *
 * @since 0.1.0
 * @category metrics
 */
export const turnsQueued: Metric.Metric.Gauge<number> = Metric.gauge("claude_agent_cluster_turns_queued", {
  description: "Turns accepted by the runner that wait for an earlier turn of their conversation"
})

/**
 * Completed turns that could not be recorded in the `SessionStore` (after the retries, or refused:
 * another runner owns the conversation now): the turn fails, and the conversation resumes from
 * the turns stored before it.
 *
 * @example
 * ```ts
 * import { Effect, Metric } from "effect"
 * import { AgentMetrics } from "effect-claude-agent/cluster"
 *
 * const failures = Effect.map(Metric.value(AgentMetrics.mirrorFailures), (state) => state.count)
 * ```
 *
 * @since 0.1.0
 * @category metrics
 */
export const mirrorFailures: Metric.Metric.Counter<number> = Metric.counter("claude_agent_cluster_mirror_failures", {
  description: "Completed turns that could not be recorded in the SessionStore",
  incremental: true
})

/**
 * What the retention of `AgentAdmin` removed, tagged with `kind`: `turns` (finished turns, with
 * their messages and replies) and `transcripts` (the stored sessions of idle conversations).
 *
 * @example
 * ```ts
 * import { Effect, Metric } from "effect"
 * import { AgentMetrics } from "effect-claude-agent/cluster"
 *
 * const pruned = Effect.map(Metric.value(AgentMetrics.retentionRemoved.pipe(Metric.tagged("kind", "turns"))), (s) => s.count)
 * ```
 *
 * @since 0.1.0
 * @category metrics
 */
export const retentionRemoved: Metric.Metric.Counter<number> = Metric.counter(
  "claude_agent_cluster_retention_removed",
  {
    description: "Finished turns and idle transcripts removed by the retention policy",
    incremental: true
  }
)
