// Where the CLI keeps a session's transcript, computed the way `Sessions` finds it:
// `<config dir>/projects/<project folder of the real cwd>/<sessionId>.jsonl`. The config dir is the
// one the CLI process will see: `env` of the session's options is merged over this process's
// environment, so a `CLAUDE_CONFIG_DIR` or `HOME` there wins.
import { FileSystem, Path } from "@effect/platform"
import { Effect } from "effect"
import * as ConfigDir from "../../internal/transcripts/configDir.js"
import * as T from "../../internal/transcripts/transcript.js"

const nonEmpty = (s: string | undefined): string | undefined => (s !== undefined && s.length > 0 ? s : undefined)

/** The launch facts that decide the transcript's place. */
export interface Place {
  readonly cwd?: string | undefined
  readonly env?: { readonly [key: string]: string | undefined } | undefined
}

export const transcriptPath = (
  sessionId: string,
  place: Place
): Effect.Effect<string, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const env = place.env ?? {}
    const configDir = yield* ConfigDir.resolve({ configDir: nonEmpty(env.CLAUDE_CONFIG_DIR), home: nonEmpty(env.HOME) })
    const cwd = place.cwd ?? path.resolve(".")
    // The CLI records its real working directory (symlinks resolved).
    const real = yield* fs.realPath(cwd).pipe(Effect.orElseSucceed(() => path.resolve(cwd)))
    return path.join(configDir, "projects", T.projectDirName(real), `${sessionId}.jsonl`)
  })
