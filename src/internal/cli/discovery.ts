// Finding the `claude` executable and checking its version.
//
// Order: the `pathToClaudeCodeExecutable` option → `CLAUDE_CODE_PATH` → the binary of
// `@anthropic-ai/claude-code` in a node_modules above this package or the working directory →
// `claude` on PATH → the usual install locations. An explicit path that does not exist is an
// error, not a reason to fall back: the caller asked for that binary.
import { execFile } from "node:child_process"
import { existsSync } from "node:fs"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import { Deferred, Effect, Fiber, Option } from "effect"
import { CLINotFoundError } from "../../SdkError.js"

/** The oldest CLI this SDK is tested against; older ones only get a warning. */
export const minimumVersion = "2.0.0"

/** Set (to anything) to skip the `claude -v` check. */
export const skipVersionCheckEnv = "CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK"

// Below this size `bin/claude.exe` is the npm package's placeholder (its postinstall did not
// run); the real binary is in the platform package.
const placeholderBytes = 1024 * 1024
const placeholderSuffix = "claude-code/bin/claude.exe"

const hostProcess = (): { platform: string; arch: string; cwd: string | undefined } => {
  const proc: unknown = Reflect.get(globalThis, "process")
  const read = (key: string): string | undefined => {
    if (typeof proc !== "object" || proc === null) return undefined
    const value: unknown = Reflect.get(proc, key)
    return typeof value === "string" ? value : undefined
  }
  const cwdFn: unknown = typeof proc === "object" && proc !== null ? Reflect.get(proc, "cwd") : undefined
  const cwd: unknown = typeof cwdFn === "function" ? Reflect.apply(cwdFn, proc, []) : undefined
  return {
    platform: read("platform") ?? "linux",
    arch: read("arch") ?? "x64",
    cwd: typeof cwd === "string" ? cwd : undefined
  }
}

const ancestors = (path: Path.Path, start: string): Array<string> => {
  const out: Array<string> = []
  let dir = path.resolve(start)
  for (;;) {
    out.push(dir)
    const parent = path.dirname(dir)
    if (parent === dir) return out
    dir = parent
  }
}

/** The candidate paths, in the order they are tried (without the explicit ones). */
export const candidates = (env: Readonly<Record<string, string | undefined>>) =>
  Effect.flatMap(Path.Path, (path) => Effect.map(searchPlan(path, env), flatten))

// The candidates in groups: those of a group with a `folder` all lie in it, so that one failed
// stat of the folder stands for theirs.
interface Group {
  readonly folder: string | undefined
  readonly files: ReadonlyArray<string>
}

const flatten = (groups: ReadonlyArray<Group>): Array<string> => groups.flatMap((group) => group.files)

const searchPlan = Effect.fnUntraced(function*(path: Path.Path, env: Readonly<Record<string, string | undefined>>) {
  const host = hostProcess()
  const exe = host.platform === "win32" ? "claude.exe" : "claude"
  const platformPackages = [
    `claude-code-${host.platform}-${host.arch}`,
    `claude-code-${host.platform}-${host.arch}-musl`
  ]

  const here = yield* path.fromFileUrl(new URL(import.meta.url)).pipe(Effect.option)
  const roots = [
    ...(Option.isSome(here) ? ancestors(path, path.dirname(here.value)) : []),
    ...(host.cwd !== undefined ? ancestors(path, host.cwd) : [])
  ]
  const fromNodeModules = [...new Set(roots)].map((dir): Group => {
    const folder = path.join(dir, "node_modules", "@anthropic-ai")
    return {
      folder,
      files: [
        path.join(folder, "claude-code", "bin", "claude.exe"),
        ...platformPackages.map((pkg) => path.join(folder, pkg, exe))
      ]
    }
  })

  const delimiter = host.platform === "win32" ? ";" : ":"
  const fromPath = (env.PATH ?? "").split(delimiter).filter((d) => d.length > 0).map((d) => path.join(d, exe))

  const home = env.HOME ?? env.USERPROFILE
  const usual = [
    ...(home === undefined ? [] : [
      path.join(home, ".claude", "local", exe),
      path.join(home, ".local", "bin", exe),
      path.join(home, ".npm-global", "bin", exe),
      path.join(home, "node_modules", ".bin", exe)
    ]),
    "/usr/local/bin/claude",
    "/opt/homebrew/bin/claude",
    "/usr/bin/claude"
  ]
  const single: Group = { folder: undefined, files: [...fromPath, ...usual] }
  return [...fromNodeModules, single]
})

const usable = (fs: FileSystem.FileSystem, file: string) =>
  fs.stat(file).pipe(
    Effect.map((info) =>
      info.type === "File" &&
      (!file.endsWith(placeholderSuffix) || Number(info.size) >= placeholderBytes)
    ),
    Effect.orElseSucceed(() => false)
  )

// Whether a folder can be statted. When it cannot (missing, or not searchable), no path inside it
// can be either.
const present = (fs: FileSystem.FileSystem, folder: string) =>
  fs.stat(folder).pipe(Effect.as(true), Effect.orElseSucceed(() => false))

// The first usable candidate in order, or none. The candidates are statted one after another: on a
// cold process each failed stat costs 0.3-0.4 ms of CPU (the errors Node and the platform build for
// it, Effect's failure path, run for the first time), far more than its thread-pool wait, and stats
// run together add a forked fiber and its interruption, 4-5 ms of CPU on their first use
// (docs/performance.md, "The search, concurrent"). So the search spends fewer stats rather than
// overlapping them: a node_modules folder without `@anthropic-ai` costs one failed stat instead of
// one per package.
const firstUsable = Effect.fnUntraced(function*(fs: FileSystem.FileSystem, groups: ReadonlyArray<Group>) {
  for (const { files, folder } of groups) {
    if (folder !== undefined && !(yield* present(fs, folder))) continue
    for (const file of files) {
      if (yield* usable(fs, file)) return Option.some(file)
    }
  }
  return Option.none<string>()
})

const searched = new Map<string, string>()

// The caller asked for that binary: a named path that does not exist is an error, not a reason to
// search.
const missingNamed = (chosen: string, explicit: string | undefined) =>
  new CLINotFoundError({
    searched: [chosen],
    reason: explicit !== undefined
      ? "the path given in `pathToClaudeCodeExecutable` does not exist"
      : "the path in the environment variable CLAUDE_CODE_PATH does not exist"
  })

const resolve = Effect.fnUntraced(function*(
  fs: FileSystem.FileSystem,
  path: Path.Path,
  explicit: string | undefined,
  env: Readonly<Record<string, string | undefined>>
) {
  const chosen = explicit ?? env.CLAUDE_CODE_PATH
  // A path about to be spawned is checked where it is spawned from, the real file system, with
  // one `stat` on this thread rather than through the `FileSystem` service: that would put a
  // thread-pool round trip (and Effect's file-system wrapping, run for the first time) between a
  // first query and its spawn, 2-3 ms of an idle main thread (docs/performance.md, "The cold
  // first query").
  if (chosen !== undefined) return existsSync(chosen) ? chosen : yield* missingNamed(chosen, explicit)
  // The search stats up to dozens of paths: what it found is remembered for the same PATH, HOME and
  // working directory, and only checked again (one stat) for the next session.
  const key = [env.PATH, env.HOME ?? env.USERPROFILE, hostProcess().cwd].join("\u0000")
  const found = searched.get(key)
  if (found !== undefined && (yield* usable(fs, found))) return found
  searched.delete(key)
  const groups = yield* searchPlan(path, env)
  const hit = yield* firstUsable(fs, groups)
  if (Option.isSome(hit)) {
    searched.set(key, hit.value)
    return hit.value
  }
  return yield* new CLINotFoundError({
    searched: flatten(groups),
    reason: "no claude executable in any searched location"
  })
})

/**
 * Resolves the executable. `explicit` is the `pathToClaudeCodeExecutable` option; `env` is the
 * child's environment (it may set `CLAUDE_CODE_PATH` and `PATH`). It runs once per session: its
 * span has no call-site stack trace (`Effect.fn`'s costs an `Error` per call).
 */
export const findCli = (
  explicit: string | undefined,
  env: Readonly<Record<string, string | undefined>>
): Effect.Effect<string, CLINotFoundError, FileSystem.FileSystem | Path.Path> =>
  Effect.flatMap(
    FileSystem.FileSystem,
    (fs) => Effect.flatMap(Path.Path, (path) => findCliWith(fs, path, explicit, env))
  )

/** `findCli` with its file system and path services given (a caller that holds them needs no context). */
export const findCliWith = (
  fs: FileSystem.FileSystem,
  path: Path.Path,
  explicit: string | undefined,
  env: Readonly<Record<string, string | undefined>>
): Effect.Effect<string, CLINotFoundError> =>
  Effect.withSpan(resolve(fs, path, explicit, env), "ClaudeAgent.findCli", { captureStackTrace: false })

/** How the CLI is started: the command, and the arguments before the CLI's own. */
export interface Invocation {
  readonly command: string
  readonly args: ReadonlyArray<string>
}

const scriptExtensions = [".js", ".mjs", ".ts", ".tsx", ".jsx"]

/** A CLI given as a JavaScript (or TypeScript) file runs under a runtime; any other is executed itself. */
export const isScript = (cli: string): boolean => scriptExtensions.some((extension) => cli.endsWith(extension))

/** The runtime for a script CLI when `executable` is not given: the one running this code (Bun or Node). */
export const defaultRuntime = (): "bun" | "node" => Reflect.get(globalThis, "Bun") === undefined ? "node" : "bun"

/**
 * The official SDK's rule: a script CLI runs as `executable executableArgs… cli`; any other CLI
 * runs itself, with `executableArgs` first. The CLI's own arguments follow either way.
 */
export const invocation = (
  cli: string,
  executable: "bun" | "deno" | "node" | undefined,
  executableArgs: ReadonlyArray<string> = []
): Invocation =>
  isScript(cli)
    ? { command: executable ?? defaultRuntime(), args: [...executableArgs, cli] }
    : { command: cli, args: executableArgs }

const versionCache = new Map<string, Option.Option<string>>()

/** `a < b` for dotted versions. */
export const versionLessThan = (a: string, b: string): boolean => {
  const pa = a.split(".").map(Number)
  const pb = b.split(".").map(Number)
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i] ?? 0
    const y = pb[i] ?? 0
    if (x !== y) return x < y
  }
  return false
}

/**
 * Reads the CLI's version once per path (cached) and warns when it is older than
 * `minimumVersion`: the version the CLI reported (`reported`, from its `initialize` reply), or
 * else `claude -v`'s (2 s limit). Never fails: a CLI that cannot report its version may still
 * work, and if it cannot start at all the spawn reports that properly. `args` go before `-v` (a
 * runtime and a script CLI, see `invocation`).
 */
const checking = new Set<string>()

// `command args… -v`'s stdout, or undefined when it fails or takes more than 2 s (then it is killed).
const versionOutput = (command: string, args: ReadonlyArray<string>) =>
  Effect.async<string | undefined>((resume) => {
    try {
      const child = execFile(
        command,
        [...args, "-v"],
        { timeout: 2000, killSignal: "SIGKILL", windowsHide: true },
        (error, stdout) => {
          resume(Effect.succeed(error === null ? stdout : undefined))
        }
      )
      return Effect.sync(() => {
        child.kill()
      })
    } catch {
      resume(Effect.succeed(undefined))
    }
  })

/** Whether `checkVersion` has nothing to do (checked already, being checked, or skipped): no fiber needed. */
export const versionCheckDone = (
  command: string,
  env: Readonly<Record<string, string | undefined>>,
  args: ReadonlyArray<string> = []
): boolean => {
  if (env[skipVersionCheckEnv] !== undefined) return true
  const key = [command, ...args].join("\u0000")
  return versionCache.has(key) || checking.has(key)
}

// Reads the version out of what the CLI said (`-v`'s output, or the version it reported), keeps it
// for the path, and warns when it is older than `minimumVersion`.
const judge = (key: string, label: string) => (output: string | undefined): Effect.Effect<Option.Option<string>> =>
  Effect.suspend((): Effect.Effect<Option.Option<string>> => {
    checking.delete(key)
    const version = Option.flatMap(
      Option.fromNullable(output),
      (text) => Option.fromNullable(/(\d+\.\d+\.\d+)/.exec(text)?.[1])
    )
    versionCache.set(key, version)
    if (Option.isNone(version)) {
      return Effect.as(Effect.logDebug(`effect-claude-agent: could not read the version of ${label}`), version)
    }
    if (!versionLessThan(version.value, minimumVersion)) return Effect.succeed(version)
    return Effect.as(
      Effect.logWarning(
        `effect-claude-agent: Claude Code ${version.value} at ${label} is older than ${minimumVersion}, ` +
          `the oldest version this SDK supports; update it with \`npm install @anthropic-ai/claude-code@latest\``
      ),
      version
    )
  })

export const checkVersion = Effect.fn("ClaudeAgent.checkVersion")(function*(
  command: string,
  env: Readonly<Record<string, string | undefined>>,
  args: ReadonlyArray<string> = [],
  /** The version the CLI reported itself, if any: when it has one, `-v` is not run. */
  reported: Effect.Effect<string | undefined> = Effect.succeed(undefined)
) {
  if (env[skipVersionCheckEnv] !== undefined) return Option.none<string>()
  const key = [command, ...args].join("\u0000")
  const cached = versionCache.get(key)
  if (cached !== undefined) return cached
  // Sessions opened together check once: the others go on without waiting (the check only warns).
  if (checking.has(key)) return Option.none<string>()
  checking.add(key)
  const judged = judge(key, [command, ...args].join(" "))
  const version = yield* reported.pipe(Effect.onInterrupt(() => Effect.sync(() => checking.delete(key))))
  if (version !== undefined) return yield* judged(version)
  // `-v` runs to its end (2 s at most) even if the session ends first: a CLI too old to answer
  // `initialize` is the one the warning is for.
  return yield* Fiber.join(yield* Effect.forkDaemon(Effect.flatMap(versionOutput(command, args), judged)))
}) satisfies (
  command: string,
  env: Readonly<Record<string, string | undefined>>,
  args?: ReadonlyArray<string>,
  reported?: Effect.Effect<string | undefined>
) => Effect.Effect<Option.Option<string>>

// The version each session's CLI reports in its `initialize` reply, by the session's transport:
// the check waits for it rather than starting a second CLI process beside the first one's start-up.
const reports = new WeakMap<object, Deferred.Deferred<string | undefined>>()

/**
 * The version the CLI behind `transport` reports (`reportVersion`), to give `checkVersion`: it
 * waits for the `initialize` reply, and is `undefined` when the reply has no version or the
 * request failed.
 */
export const versionReportOf = (transport: object): Effect.Effect<Effect.Effect<string | undefined>> =>
  Effect.map(Deferred.make<string | undefined>(), (report) => {
    reports.set(transport, report)
    return Deferred.await(report)
  })

/** Hands the version the `initialize` reply reported (`undefined`: none, or no reply) to the check waiting for it. */
export const reportVersion = (transport: object, version: string | undefined): Effect.Effect<void> => {
  const report = reports.get(transport)
  if (report === undefined) return Effect.void
  reports.delete(transport)
  return Deferred.succeed(report, version)
}
