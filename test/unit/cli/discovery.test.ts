// The CLI search with no path named, over a FileSystem double whose stats complete when the test
// says (TestClock): the first usable candidate IN ORDER wins, whichever stat answers first, and a
// search that finds nothing lists every candidate in order.
import { FileSystem } from "@effect/platform"
import { SystemError } from "@effect/platform/Error"
import * as Path from "@effect/platform/Path"
import { NodePath } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Clock, Deferred, Effect, Fiber, Option, TestClock } from "effect"
import * as Discovery from "../../../src/internal/cli/discovery.js"

const executable: FileSystem.File.Info = {
  type: "File",
  mtime: Option.none(),
  atime: Option.none(),
  birthtime: Option.none(),
  dev: 0,
  ino: Option.none(),
  mode: 0o755,
  nlink: Option.none(),
  uid: Option.none(),
  gid: Option.none(),
  rdev: Option.none(),
  size: FileSystem.Size(2 * 1024 * 1024),
  blksize: Option.none(),
  blocks: Option.none()
}

const notFound = (file: string) =>
  Effect.fail(new SystemError({ reason: "NotFound", module: "FileSystem", method: "stat", pathOrDescriptor: file }))

// A double in which `slow` answers (`slowAnswer`) only once the test clock passes 1 s, and says
// when its stat has started; `usable` paths are executables, every other path is missing. It
// notes the order in which the stats complete.
const double = (options: {
  readonly slow: string
  readonly slowAnswer: "usable" | "missing"
  readonly usable: ReadonlySet<string>
  readonly started: Deferred.Deferred<void>
}) => {
  const completed: Array<string> = []
  const answer = (file: string, usable: boolean) =>
    Effect.zipRight(
      Effect.sync(() => completed.push(file)),
      usable ? Effect.succeed(executable) : notFound(file)
    )
  const fs = FileSystem.makeNoop({
    stat: (file) =>
      file === options.slow
        ? Deferred.succeed(options.started, undefined).pipe(
          Effect.zipRight(Effect.sleep("1 second")),
          Effect.zipRight(answer(file, options.slowAnswer === "usable"))
        )
        : answer(file, options.usable.has(file))
  })
  return { fs, completed }
}

// A PATH of two directories of its own (no earlier search is remembered for it).
const twoDirs = (path: Path.Path) => {
  const tag = `${Date.now()}-${Math.random().toString(36).slice(2)}`
  const first = `/eca-first-${tag}`
  const second = `/eca-second-${tag}`
  return {
    env: { PATH: `${first}:${second}`, HOME: `/eca-home-${tag}` },
    first: path.join(first, "claude"),
    second: path.join(second, "claude")
  }
}

describe("Discovery.findCli's search", () => {
  it.effect("an earlier usable candidate whose stat completes after a later one's still wins", () =>
    Effect.gen(function*() {
      const path = yield* Path.Path
      const { env, first, second } = twoDirs(path)
      const list = yield* Discovery.candidates(env)
      expect(list.indexOf(first)).toBeLessThan(list.indexOf(second))
      const started = yield* Deferred.make<void>()
      const { fs } = double({ slow: first, slowAnswer: "usable", usable: new Set([second]), started })
      const search = yield* Effect.fork(Discovery.findCliWith(fs, path, undefined, env))
      yield* Deferred.await(started)
      yield* TestClock.adjust("1 second")
      expect(yield* Fiber.join(search)).toBe(first)
    }).pipe(Effect.provide(NodePath.layer)))

  it.effect("a later usable candidate is not returned before every earlier one is known unusable", () =>
    Effect.gen(function*() {
      const path = yield* Path.Path
      const { env, first, second } = twoDirs(path)
      const started = yield* Deferred.make<void>()
      const { fs } = double({ slow: first, slowAnswer: "missing", usable: new Set([second]), started })
      // When the search returns, on the test clock: the earlier candidate answers at 1 s.
      const search = yield* Effect.fork(
        Effect.zip(Discovery.findCliWith(fs, path, undefined, env), Clock.currentTimeMillis)
      )
      yield* Deferred.await(started)
      yield* TestClock.adjust("1 second")
      const [found, at] = yield* Fiber.join(search)
      expect(found).toBe(second)
      expect(at).toBe(1000)
    }).pipe(Effect.provide(NodePath.layer)))

  it.effect("when no candidate is usable, CLINotFoundError's `searched` lists every candidate in order", () =>
    Effect.gen(function*() {
      const path = yield* Path.Path
      const { env, first } = twoDirs(path)
      const list = yield* Discovery.candidates(env)
      const started = yield* Deferred.make<void>()
      // The first PATH candidate answers last, after the later ones would have.
      const { completed, fs } = double({ slow: first, slowAnswer: "missing", usable: new Set(), started })
      const search = yield* Effect.fork(Effect.flip(Discovery.findCliWith(fs, path, undefined, env)))
      yield* Deferred.await(started)
      yield* TestClock.adjust("1 second")
      const error = yield* Fiber.join(search)
      expect(error._tag).toBe("CLINotFoundError")
      expect(error.searched).toEqual(list)
      // A missing `node_modules/@anthropic-ai` costs one stat: none of its packages is statted.
      const inFolders = list.filter((file) => file.includes("/node_modules/@anthropic-ai/"))
      expect(inFolders.length).toBeGreaterThan(0)
      expect(completed.filter((file) => inFolders.includes(file))).toEqual([])
      expect(completed.filter((file) => list.includes(file))).toEqual(list.filter((file) => !inFolders.includes(file)))
    }).pipe(Effect.provide(NodePath.layer)))
})
