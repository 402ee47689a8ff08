// Budgets enforced over the fake CLI: a turn over a cap does not start, a running turn that
// crosses one is interrupted at that message and its stream ends with the error, a pool request
// of a spent tenant fails without starting a process; windows reset by day (TestClock); keys of
// one tenant share its cap; concurrent turns overshoot by at most one response each.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Layer, Ref, Scope, Stream, TestClock } from "effect"
import * as AgentPool from "../../src/AgentPool.js"
import * as Budget from "../../src/Budget.js"
import * as ClaudeAgent from "../../src/ClaudeAgent.js"
import * as Control from "../../src/schema/Control.js"
import * as Message from "../../src/schema/Message.js"
import { Transport } from "../../src/services/Transport.js"
import * as FakeCli from "../../src/testing/FakeCli.js"
import { eventually } from "../support/waits.js"

const MODEL = "claude-sonnet-4-5"
// Sonnet's list price per input token: what a running turn is priced at before its result.
const PRICE = 3e-6
const INPUT = 1000
const OUTPUT = 100
// One response: its input, and its output estimated from its text (four characters a token).
const RESPONSE_USD = (INPUT + 5 * OUTPUT) * PRICE
const RESPONSE_TOKENS = INPUT + OUTPUT
const TEXT = "x".repeat(OUTPUT * 4)

const isInterrupt = (frame: FakeCli.JsonObject) =>
  frame.type === "control_request" && typeof frame.request === "object" && frame.request !== null &&
  "subtype" in frame.request && frame.request.subtype === "interrupt"

let ids = 0
const assistant = (cli: FakeCli.FakeCliHandle): FakeCli.JsonObject => ({
  type: "assistant",
  message: {
    id: `msg_${++ids}`,
    type: "message",
    role: "assistant",
    model: MODEL,
    content: [{ type: "text", text: TEXT }],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: INPUT, output_tokens: 1 }
  },
  parent_tool_use_id: null,
  session_id: cli.sessionId,
  uuid: crypto.randomUUID()
})

const result = (cli: FakeCli.FakeCliHandle, responses: number, interrupted: boolean): FakeCli.JsonObject => {
  const figures = {
    inputTokens: responses * INPUT,
    outputTokens: responses * OUTPUT,
    cacheReadInputTokens: 0,
    cacheCreationInputTokens: 0,
    costUSD: responses * RESPONSE_USD
  }
  return {
    type: "result",
    subtype: interrupted ? "error_during_execution" : "success",
    is_error: interrupted,
    duration_ms: 1,
    duration_api_ms: 1,
    num_turns: responses,
    ...(interrupted ? { errors: ["interrupted"] } : { result: `${responses} responses` }),
    stop_reason: null,
    session_id: cli.sessionId,
    total_cost_usd: figures.costUSD,
    usage: { input_tokens: figures.inputTokens, output_tokens: figures.outputTokens },
    modelUsage: { [MODEL]: figures },
    model_usage_since_last_result: { [MODEL]: figures },
    permission_denials: [],
    uuid: crypto.randomUUID()
  }
}

// A model that calls tools turn after turn: up to `limit` responses (the prompt's number, or 20),
// each followed by a round trip with the SDK (when it answers, it has read the response), and
// stopped by an interrupt as the CLI is.
const looping = (message: FakeCli.JsonObject, cli: FakeCli.FakeCliHandle) =>
  Effect.gen(function*() {
    const limit = Number(FakeCli.userText(message)) || 20
    const before = (yield* cli.sent).filter(isInterrupt).length
    yield* cli.emit(cli.frames.systemInit({ model: MODEL }))
    let n = 0
    let interrupted = false
    while (n < limit && !interrupted) {
      yield* cli.emit(assistant(cli))
      n++
      yield* Effect.either(cli.request(Control.HookCallback, { callback_id: "sync", input: {} }))
      interrupted = (yield* cli.sent).filter(isInterrupt).length > before
    }
    yield* cli.emit(result(cli, n, interrupted))
  })

// A ClaudeAgent over fake CLIs that loop, counting the processes started.
const loopingAgent = () => {
  const counts = { spawned: 0, prompts: 0 }
  const agent = ClaudeAgent.make({
    transport: Layer.scoped(
      Transport,
      Effect.suspend(() => {
        counts.spawned++
        const onUserMessage = (message: FakeCli.JsonObject, cli: FakeCli.FakeCliHandle) =>
          Effect.zipRight(Effect.sync(() => void counts.prompts++), looping(message, cli))
        return Effect.map(FakeCli.make({ onUserMessage }), ({ transport }) => transport)
      })
    )
  })
  return { agent, counts }
}

const budgetLayer = (config: Budget.Config) => Budget.Budget.layerMemory(config)

// Runs one turn on `session`: its messages until the stream ends, and how it ended.
const turn = (
  session: { readonly send: (p: string) => Effect.Effect<string, unknown> } & {
    readonly receiveResponse: Stream.Stream<Message.Message, unknown>
  },
  prompt: string
) =>
  Effect.gen(function*() {
    yield* session.send(prompt)
    const seen = yield* Ref.make<Array<Message.Message>>([])
    const exit = yield* session.receiveResponse.pipe(
      Stream.runForEach((m) => Ref.update(seen, (all) => [...all, m])),
      Effect.exit
    )
    return { messages: yield* Ref.get(seen), exit }
  })

const failureOf = (exit: Exit.Exit<unknown, unknown>) =>
  Exit.isFailure(exit) ? exit.cause._tag === "Fail" ? exit.cause.error : exit.cause : undefined

describe("Budget (fake CLI)", () => {
  it.scoped("a turn whose cap is spent fails at once with BudgetExceededError and writes nothing", () =>
    Effect.gen(function*() {
      const { agent, counts } = loopingAgent()
      const budget = yield* Budget.Budget
      yield* budget.charge({ tenant: "acme" }, { usd: 2, tokens: 0 })
      const session = yield* agent.session().pipe(Budget.withAccount({ tenant: "acme" }))
      const error = yield* Effect.flip(session.send("3"))
      expect(error).toMatchObject({
        _tag: "BudgetExceededError",
        scope: "tenant",
        id: "acme",
        unit: "usd",
        window: "total",
        spent: 2,
        limit: 1,
        stage: "start"
      })
      expect(counts.prompts).toBe(0)
      // Another tenant is not affected.
      const other = yield* agent.session().pipe(Budget.withAccount({ tenant: "globex" }))
      const done = yield* turn(other, "2")
      expect(done.exit._tag).toBe("Success")
    }).pipe(Effect.provide(budgetLayer({ caps: [{ scope: "tenant", usd: 1 }] }))))

  it.scoped("a running turn that crosses a $ cap is interrupted at that message and its stream ends with the error", () =>
    Effect.gen(function*() {
      const { agent } = loopingAgent()
      const session = yield* agent.session().pipe(Budget.withAccount({ tenant: "acme" }))
      const { exit, messages } = yield* turn(session, "20")
      // 0.0045 a response: the third crosses $0.01.
      expect(messages.filter((m) => m.type === "assistant")).toHaveLength(3)
      expect(messages.some(Message.isResult)).toBe(false)
      const error = failureOf(exit)
      expect(error).toMatchObject({ _tag: "BudgetExceededError", scope: "tenant", id: "acme", stage: "running" })
      expect(error).toHaveProperty("spent", expect.closeTo(3 * RESPONSE_USD, 9))
      // The CLI stopped after that response: its result (read, not delivered) settles the spend.
      yield* session.control.awaitRunState((run) => run.results === 1)
      const usage = yield* session.usage
      expect(usage.costUsd).toBeCloseTo(3 * RESPONSE_USD, 9)
      const budget = yield* Budget.Budget
      const [standing] = yield* budget.standings({ tenant: "acme" })
      expect(standing?.spent).toBeCloseTo(3 * RESPONSE_USD, 9)
      // The session goes on, and its next turn does not start.
      expect(yield* Effect.flip(session.send("1"))).toMatchObject({ _tag: "BudgetExceededError", stage: "start" })
    }).pipe(Effect.provide(budgetLayer({ caps: [{ scope: "tenant", usd: 0.01 }] }))))

  it.scoped("after a stopped turn the next one starts clean: the interrupted turn's result is not delivered", () =>
    Effect.gen(function*() {
      const { agent } = loopingAgent()
      const budget = yield* Budget.Budget
      const session = yield* agent.session().pipe(Budget.withAccount({ tenant: "acme" }))
      const stopped = yield* turn(session, "20")
      expect(failureOf(stopped.exit)).toMatchObject({ stage: "running" })
      yield* session.control.awaitRunState((run) => run.results === 1)
      // More budget: the next turn runs, and its stream holds its own messages only.
      yield* budget.charge({ tenant: "acme" }, { usd: -1, tokens: 0 })
      const next = yield* turn(session, "2")
      expect(next.exit._tag).toBe("Success")
      expect(next.messages.filter((m) => m.type === "assistant")).toHaveLength(2)
      const results = next.messages.filter(Message.isResult)
      expect(results.map((r) => [r.subtype, r.num_turns])).toEqual([["success", 2]])
    }).pipe(Effect.provide(budgetLayer({ caps: [{ scope: "tenant", usd: 0.01 }] }))))

  it.scoped("a token cap on a conversation key stops the turn that crosses it; query ends with the error", () =>
    Effect.gen(function*() {
      const { agent } = loopingAgent()
      const first = yield* agent.query("2").pipe(Stream.runCollect, Budget.withAccount({ key: "k" }), Effect.exit)
      expect(first._tag).toBe("Success")
      const second = yield* agent.query("20").pipe(
        Stream.filter((m) => m.type === "assistant"),
        Stream.runCount,
        Budget.withAccount({ key: "k" }),
        Effect.flip
      )
      expect(second).toMatchObject({ _tag: "BudgetExceededError", scope: "key", id: "k", unit: "tokens" })
      // 2 responses before, then 2 more reach 4 × 1100 ≥ 4000.
      expect(second).toHaveProperty("spent", 4 * RESPONSE_TOKENS)
    }).pipe(Effect.provide(budgetLayer({ caps: [{ scope: "key", tokens: 4000 }] }))))

  it.scoped("a daily cap resets on the next UTC day (TestClock)", () =>
    Effect.gen(function*() {
      const { agent } = loopingAgent()
      const budget = yield* Budget.Budget
      yield* budget.charge({ tenant: "acme" }, { usd: 0.05, tokens: 0 })
      const session = yield* agent.session().pipe(Budget.withAccount({ tenant: "acme" }))
      expect(yield* Effect.flip(session.send("1"))).toMatchObject({ window: "day", stage: "start" })
      yield* TestClock.adjust("1 day")
      const done = yield* turn(session, "2")
      expect(done.exit._tag).toBe("Success")
      const [standing] = yield* budget.standings({ tenant: "acme" })
      expect(standing?.spent).toBeCloseTo(2 * RESPONSE_USD, 9)
    }).pipe(Effect.provide(budgetLayer({ caps: [{ scope: "tenant", usd: 0.05, window: "day" }] }))))

  it.scoped("two keys of one tenant share its cap (tenant found from the key)", () =>
    Effect.gen(function*() {
      const { agent } = loopingAgent()
      const one = yield* agent.session().pipe(Budget.withAccount({ key: "acme:1" }))
      const first = yield* turn(one, "20")
      expect(failureOf(first.exit)).toMatchObject({ scope: "tenant", id: "acme", stage: "running" })
      yield* one.usage
      const two = yield* agent.session().pipe(Budget.withAccount({ key: "acme:2" }))
      expect(yield* Effect.flip(two.send("1"))).toMatchObject({ scope: "tenant", id: "acme", stage: "start" })
      const other = yield* agent.session().pipe(Budget.withAccount({ key: "globex:1" }))
      expect((yield* turn(other, "2")).exit._tag).toBe("Success")
      // Each key's own spend is kept too.
      const budget = yield* Budget.Budget
      const keyOne = yield* budget.standings({ key: "acme:1" })
      expect(keyOne[0]?.spent).toBeCloseTo(3 * RESPONSE_USD, 9)
    }).pipe(Effect.provide(budgetLayer({
      caps: [{ scope: "tenant", usd: 0.01 }, { scope: "key", usd: 100 }],
      tenant: (request) => request.key?.split(":")[0]
    }))))

  it.scoped("concurrent turns of one tenant overshoot the cap by at most one response each", () =>
    Effect.gen(function*() {
      const { agent } = loopingAgent()
      const sessions = yield* Effect.forEach(
        [1, 2, 3],
        () => agent.session().pipe(Budget.withAccount({ tenant: "acme" }))
      )
      const ends = yield* Effect.forEach(sessions, (s) => turn(s, "20"), { concurrency: "unbounded" })
      for (const end of ends) {
        expect(failureOf(end.exit)).toMatchObject({ _tag: "BudgetExceededError", stage: "running" })
      }
      yield* Effect.forEach(sessions, (s) => s.usage)
      const budget = yield* Budget.Budget
      const [standing] = yield* budget.standings({ tenant: "acme" })
      const spent = standing?.spent ?? 0
      expect(spent).toBeGreaterThanOrEqual(0.03)
      expect(spent).toBeLessThanOrEqual(0.03 + 3 * RESPONSE_USD + 1e-12)
    }).pipe(Effect.provide(budgetLayer({ caps: [{ scope: "tenant", usd: 0.03 }] }))))

  it.scoped("a reservation keeps concurrent turns from starting when too little is left for them", () =>
    Effect.gen(function*() {
      const { agent } = loopingAgent()
      const sessions = yield* Effect.forEach(
        [1, 2, 3],
        () => agent.session().pipe(Budget.withAccount({ tenant: "acme" }))
      )
      const sends = yield* Effect.forEach(sessions, (s) => Effect.exit(s.send("1")))
      expect(sends.map((e) => e._tag)).toEqual(["Success", "Success", "Failure"])
      const refused = failureOf(sends[2] ?? Exit.void)
      expect(refused).toMatchObject({ _tag: "BudgetExceededError", stage: "start", limit: 0.02 })
      expect(refused).toHaveProperty("spent", expect.closeTo(3 * 0.009, 9))
      // Each admitted turn's result settles its reservation: one response each.
      for (const s of sessions.slice(0, 2)) yield* s.receiveResponse.pipe(Stream.runDrain)
      yield* Effect.forEach(sessions, (s) => s.usage)
      const budget = yield* Budget.Budget
      const [standing] = yield* budget.standings({ tenant: "acme" })
      expect(standing?.spent).toBeCloseTo(2 * RESPONSE_USD, 9)
    }).pipe(Effect.provide(budgetLayer({ caps: [{ scope: "tenant", usd: 0.02 }], reserve: { usd: 0.009 } }))))
})

// With partial messages: each response's output count comes in its stream's `message_delta`, after
// its assistant message; a short text with many output tokens (thinking, say) is priced by that.
const streaming = (message: FakeCli.JsonObject, cli: FakeCli.FakeCliHandle) =>
  Effect.gen(function*() {
    const before = (yield* cli.sent).filter(isInterrupt).length
    yield* cli.emit(cli.frames.systemInit({ model: MODEL }))
    const event = (e: FakeCli.JsonObject) =>
      cli.emit({
        type: "stream_event",
        event: e,
        parent_tool_use_id: null,
        session_id: cli.sessionId,
        uuid: crypto.randomUUID()
      })
    let n = 0
    let interrupted = false
    while (n < 20 && !interrupted) {
      const frame = assistant(cli)
      const id = typeof frame.message === "object" && frame.message !== null && "id" in frame.message
        ? frame.message.id
        : undefined
      yield* event({
        type: "message_start",
        message: { id, model: MODEL, usage: { input_tokens: INPUT, output_tokens: 1 } }
      })
      yield* cli.emit(frame)
      yield* event({ type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 2000 } })
      n++
      yield* Effect.either(cli.request(Control.HookCallback, { callback_id: "sync", input: {} }))
      interrupted = (yield* cli.sent).filter(isInterrupt).length > before
    }
    yield* cli.emit(result(cli, n, interrupted))
  })

describe("Budget with partial messages (fake CLI)", () => {
  it.scoped("a response's output count from message_delta is charged as it arrives", () =>
    Effect.gen(function*() {
      const agent = ClaudeAgent.make({
        transport: Layer.scoped(
          Transport,
          Effect.map(FakeCli.make({ onUserMessage: streaming }), ({ transport }) => transport)
        )
      })
      const session = yield* agent.session().pipe(Budget.withAccount({ tenant: "acme" }))
      const { exit, messages } = yield* turn(session, "go")
      // (1000 + 5 × 2000) × $3 a million = $0.033 a response: the second crosses $0.05 at its delta.
      const error = failureOf(exit)
      expect(error).toMatchObject({ _tag: "BudgetExceededError", stage: "running" })
      expect(error).toHaveProperty("spent", expect.closeTo(2 * (INPUT + 5 * 2000) * PRICE, 9))
      expect(messages.filter((m) => m.type === "assistant")).toHaveLength(2)
      const last = messages[messages.length - 1]
      expect(last?.type === "stream_event" && last.event.type === "message_delta").toBe(true)
    }).pipe(Effect.provide(budgetLayer({ caps: [{ scope: "tenant", usd: 0.05 }] }))))
})

describe("Budget and AgentPool (fake CLI)", () => {
  it.scoped("a request queued under a tenant that spends its cap meanwhile fails without starting a process", () =>
    Effect.gen(function*() {
      const { agent, counts } = loopingAgent()
      const pool = yield* AgentPool.make(agent, { maxConcurrent: 1, name: "search" })
      const holder = yield* Scope.make()
      const first = yield* pool.session().pipe(Budget.withAccount({ tenant: "acme" }), Scope.extend(holder))
      const queued = yield* pool.session().pipe(Budget.withAccount({ tenant: "acme" }), Effect.scoped, Effect.fork)
      yield* eventually(() => counts.spawned === 1)
      yield* Effect.repeat(Effect.zipLeft(pool.stats, Effect.yieldNow()), { until: (s) => s.pending === 1 })
      const ran = yield* turn(first, "20")
      expect(failureOf(ran.exit)).toMatchObject({ scope: "tenant", stage: "running" })
      yield* first.usage
      yield* Scope.close(holder, Exit.void)
      expect(yield* Effect.flip(Fiber.join(queued))).toMatchObject({
        _tag: "BudgetExceededError",
        scope: "tenant",
        id: "acme",
        stage: "queued"
      })
      expect(counts.spawned).toBe(1)
      // A new request of the tenant fails before it waits; the pool's own cap counts the spend.
      const late = yield* Effect.flip(pool.session().pipe(Budget.withAccount({ tenant: "acme" }), Effect.scoped))
      expect(late).toMatchObject({ stage: "queued" })
      expect((yield* pool.stats).pending).toBe(0)
      const budget = yield* Budget.Budget
      const standings = yield* budget.standings({ pool: "search" })
      expect(standings[0]?.spent).toBeCloseTo(3 * RESPONSE_USD, 9)
    }).pipe(Effect.provide(budgetLayer({ caps: [{ scope: "tenant", usd: 0.01 }, { scope: "pool", usd: 100 }] }))))

  it.scoped("a keyed conversation is charged to its key", () =>
    Effect.gen(function*() {
      const { agent } = loopingAgent()
      const pool = yield* AgentPool.make(agent, { maxConcurrent: 2 })
      const answered = yield* pool.chat("support-1", "2").pipe(Stream.runCollect, Effect.exit)
      expect(answered._tag).toBe("Success")
      const stopped = yield* pool.chat("support-1", "20").pipe(Stream.runDrain, Effect.flip)
      expect(stopped).toMatchObject({ _tag: "BudgetExceededError", scope: "key", id: "support-1", stage: "running" })
      const refused = yield* pool.chat("support-1", "1").pipe(Stream.runDrain, Effect.flip)
      expect(refused).toMatchObject({ _tag: "BudgetExceededError", stage: "queued" })
      expect((yield* pool.chat("support-2", "1").pipe(Stream.runCollect, Effect.exit))._tag).toBe("Success")
    }).pipe(Effect.provide(budgetLayer({ caps: [{ scope: "key", usd: 0.012 }] }))))
})
