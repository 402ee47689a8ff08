// The relay's pieces without a network: the wire frames, the checks a hello goes through, and
// the host's view of the session's launch.
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Client from "../../src/internal/relay/client.js"
import * as Frames from "../../src/internal/relay/frames.js"
import * as Outbound from "../../src/internal/relay/outbound.js"
import * as Policy from "../../src/internal/relay/policy.js"
import { SessionLaunch } from "../../src/layers/SessionServices.js"

const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "relay-unit-")))
const inside = path.join(root, "work")
fs.mkdirSync(inside, { recursive: true })
const outsideDir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "relay-unit-outside-")))
// A link inside the root that leads outside it.
const link = path.join(root, "link-out")
fs.symlinkSync(outsideDir, link)
afterAll(() => {
  fs.rmSync(root, { recursive: true, force: true })
  fs.rmSync(outsideDir, { recursive: true, force: true })
})

const policy: Policy.Policy = {
  token: "a-token-of-some-length",
  allowedRoots: [root],
  allowedEnv: ["ANTHROPIC_API_KEY"],
  maxArgs: 10
}

const hello = (overrides: Partial<Frames.Hello> = {}): Frames.Hello => ({
  type: "hello",
  version: Frames.version,
  token: policy.token,
  args: ["--verbose"],
  cwd: inside,
  env: {},
  ...overrides
})

describe("relay frames", () => {
  it("data frames carry the stream in their first byte; large ones are split to the limit", () => {
    const bytes = new Uint8Array([1, 2, 3, 4, 5])
    const one = Frames.encodeData(Frames.StreamId.stdout, bytes)
    expect(Frames.decodeData(one)).toEqual({ stream: Frames.StreamId.stdout, bytes })
    const split = Frames.encodeDataSplit(Frames.StreamId.stdin, bytes, 3)
    expect(split.map((m) => [...m])).toEqual([[0, 1, 2], [0, 3, 4], [0, 5]])
    expect(Frames.decodeData(new Uint8Array())).toBeUndefined()
  })

  it("control frames round-trip; anything else is refused", () => {
    const frames: ReadonlyArray<Frames.Control> = [
      hello(),
      { type: "started", pid: 42 },
      { type: "exit", code: null, signal: "SIGTERM" },
      { type: "error", code: "forbidden", message: "no" },
      { type: "ping" }
    ]
    for (const frame of frames) expect(Frames.parseControl(Frames.encodeControl(frame))).toEqual(Either.right(frame))
    expect(Either.isLeft(Frames.parseControl("not json"))).toBe(true)
    expect(Either.isLeft(Frames.parseControl(JSON.stringify({ type: "exec", command: "sh" })))).toBe(true)
    expect(Either.isLeft(Frames.parseControl(JSON.stringify({ type: "hello", token: "t" })))).toBe(true)
  })
})

describe("relay policy", () => {
  it("accepts a hello with the token, a directory inside a root, and allowed keys", () => {
    const accepted = Policy.check(policy, hello({ env: { ANTHROPIC_API_KEY: "k", CLAUDE_CODE_ENTRYPOINT: "sdk-ts" } }))
    expect(accepted).toEqual(Either.right({
      args: ["--verbose"],
      cwd: inside,
      env: { ANTHROPIC_API_KEY: "k", CLAUDE_CODE_ENTRYPOINT: "sdk-ts" }
    }))
    // No directory asked for: the first root.
    expect(Either.map(Policy.check(policy, hello({ cwd: undefined })), (a) => a.cwd)).toEqual(Either.right(root))
  })

  it("refuses a wrong, shorter, longer or empty token", () => {
    for (const token of ["a-token-of-some-lengtH", "a-token", "a-token-of-some-length-and-more", ""]) {
      expect(Policy.check(policy, hello({ token }))).toEqual(
        Either.left({ code: "unauthorized", message: "wrong or missing token" })
      )
    }
    expect(Policy.tokenMatches("", "")).toBe(false)
  })

  it("refuses directories outside the roots: elsewhere, through .., through a symbolic link, relative, missing", () => {
    for (const cwd of [outsideDir, path.join(inside, "..", ".."), link, "work", path.join(root, "missing")]) {
      const checked = Policy.check(policy, hello({ cwd }))
      expect(Either.isLeft(checked) && checked.left.code).toBe("forbidden")
    }
    // A sibling whose name starts with the root's is not inside it.
    expect(Policy.withinRoots(`${root}-sibling`, [root])).toBeUndefined()
  })

  it("refuses environment keys not allowed, naming them, and too many arguments", () => {
    const env = Policy.check(policy, hello({ env: { LD_PRELOAD: "/x.so", PATH: "/evil" } }))
    expect(env).toEqual(Either.left({ code: "forbidden", message: "environment keys not allowed: LD_PRELOAD, PATH" }))
    const args = Policy.check(policy, hello({ args: Array.from({ length: 11 }, () => "-v") }))
    expect(Either.isLeft(args) && args.left.code).toBe("bad_request")
  })
})

describe("relay client", () => {
  it("reads the session's launch by SessionLaunch's key", () => {
    expect(Client.Launch.key).toBe(SessionLaunch.key)
  })
})

describe("relay flow control", () => {
  const setup = () => {
    const events: Array<string> = []
    const pending: Array<() => void> = []
    const sent: Array<Uint8Array | string> = []
    const ws: Outbound.RawSocket = {
      send: (data, done) => {
        sent.push(data)
        if (done !== undefined) pending.push(() => done())
      },
      close: () => {}
    }
    const out = new Outbound.Outbound(ws, 64 * 1024)
    out.watch({ pause: () => events.push("pause"), resume: () => events.push("resume") })
    const writeAll = () => pending.splice(0).forEach((done) => done())
    return { events, out, sent, writeAll }
  }
  const chunk = new Uint8Array(64 * 1024 - 1)

  it("stdout pauses when the host's credit is spent and resumes when it grants more; stderr costs none", () => {
    const { events, out, writeAll } = setup()
    for (let sent = 0; sent < Frames.initialCredit - chunk.length; sent += chunk.length) {
      out.data(Frames.StreamId.stdout, chunk)
      writeAll()
    }
    for (let i = 0; i < 100; i++) {
      out.data(Frames.StreamId.stderr, chunk)
      writeAll()
    }
    expect(events).toEqual([])
    out.data(Frames.StreamId.stdout, chunk)
    writeAll()
    expect(events).toEqual(["pause"])
    out.credit(chunk.length)
    expect(events).toEqual(["pause", "resume"])
  })

  it("stdout pauses while more than the high-water mark is unwritten, and resumes below the low one", () => {
    const { events, out, sent, writeAll } = setup()
    const messages = Math.ceil(Outbound.HIGH_WATER_BYTES / chunk.length) + 1
    for (let i = 0; i < messages; i++) out.data(Frames.StreamId.stdout, chunk)
    expect(events).toEqual(["pause"])
    expect(sent).toHaveLength(messages)
    writeAll()
    expect(events).toEqual(["pause", "resume"])
  })
})
