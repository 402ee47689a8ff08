// The CLI's config directory, found the way the CLI finds it: `CLAUDE_CONFIG_DIR`, else `.claude`
// in the home directory. Read through Effect's `ConfigProvider` (the environment by default), so
// tests can give their own.
import * as Path from "@effect/platform/Path"
import { Config, Effect, Option } from "effect"

const envVar = (name: string) =>
  Effect.option(Config.string(name)).pipe(
    Effect.map(Option.filter((s) => s.length > 0)),
    Effect.map(Option.getOrUndefined)
  )

/**
 * The config directory (NFC-normalised, as the CLI writes its paths). `given` wins over the
 * environment: a session's own `env` (`CLAUDE_CONFIG_DIR`, `HOME`) or an explicit directory.
 */
export const resolve = (
  given: { readonly configDir?: string | undefined; readonly home?: string | undefined } = {}
): Effect.Effect<string, never, Path.Path> =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const dir = given.configDir ?? (yield* envVar("CLAUDE_CONFIG_DIR"))
    if (dir !== undefined) return dir.normalize("NFC")
    const home = given.home ?? (yield* envVar("HOME")) ?? (yield* envVar("USERPROFILE"))
    if (home === undefined) {
      yield* Effect.logWarning("effect-claude-agent: no CLAUDE_CONFIG_DIR, HOME or USERPROFILE; using ./.claude")
    }
    return path.join(home ?? path.resolve("."), ".claude").normalize("NFC")
  })
