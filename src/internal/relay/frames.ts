/**
 * The relay's wire protocol (docs/protocol-relay.md): binary WebSocket messages carry bytes of one
 * of the CLI's streams (the first byte names it), text messages carry JSON control frames. Plain
 * TypeScript: no Effect, no I/O.
 *
 * @internal
 */
import { Either, type ParseResult, Schema } from "effect"
import { parseJsonBoundary } from "../protocol/json.js"
import { optionalString, NullOrString } from "../schema/schemas.js"

/**
 * The protocol's version, sent in `hello`.
 *
 * @internal
 */
export const version = 1

/**
 * Environment keys the SDK itself sets for every session: always allowed.
 *
 * @internal
 */
export const sdkEnvKeys: ReadonlyArray<string> = [
  "CLAUDE_CODE_ENTRYPOINT",
  "CLAUDE_AGENT_SDK_CLIENT_APP",
  "CLAUDE_CODE_SDK_READS_SESSION_STATE",
  "CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING",
  "CLAUDE_CODE_QUESTION_PREVIEW_FORMAT"
]

/**
 * The stream a data frame belongs to (its first byte).
 *
 * @internal
 */
export const StreamId = { stdin: 0, stdout: 1, stderr: 2 } as const

/**
 * Bytes of stdout the relay may send before the host grants more with `credit` frames (as it
 * reads them): what a host that stops reading holds at most.
 *
 * @internal
 */
export const initialCredit = 4 * 1024 * 1024

/**
 * Close codes the relay uses (4000–4999 is the application range).
 *
 * @internal
 */
export const CloseCode = {
  normal: 1000,
  badRequest: 4400,
  unauthorized: 4401,
  forbidden: 4403,
  timeout: 4408,
  spawnFailed: 4500
} as const

// The frames' Schemas, made when the relay decodes its first control frame: the barrel loads this
// module with the relay's client, and most processes never open a relay connection.
const makeControl = () => {
  const ErrorCode = Schema.Literal("bad_request", "unauthorized", "forbidden", "timeout", "spawn_failed")
  const Hello = Schema.Struct({
    type: Schema.Literal("hello"),
    version: Schema.Number,
    token: Schema.String,
    args: Schema.Array(Schema.String),
    cwd: optionalString,
    env: Schema.Record({ key: Schema.String, value: Schema.String })
  })
  const Started = Schema.Struct({ type: Schema.Literal("started"), pid: Schema.Number })
  const Exit = Schema.Struct({
    type: Schema.Literal("exit"),
    code: Schema.NullOr(Schema.Number),
    signal: NullOrString
  })
  const ErrorFrame = Schema.Struct({ type: Schema.Literal("error"), code: ErrorCode, message: Schema.String })
  const Credit = Schema.Struct({ type: Schema.Literal("credit"), bytes: Schema.Int.pipe(Schema.positive()) })
  const Simple = Schema.Struct({ type: Schema.Literal("eof", "kill", "ping", "pong") })
  return Schema.Union(Hello, Started, Exit, ErrorFrame, Credit, Simple)
}

/**
 * Every control frame, either way.
 *
 * @internal
 */
export type Control = Schema.Schema.Type<ReturnType<typeof makeControl>>

/**
 * The first frame of a connection: the token, then the session the host wants.
 *
 * @internal
 */
export type Hello = Extract<Control, { readonly type: "hello" }>

/**
 * Why the relay refused or ended a connection (the `error` frame's `code`).
 *
 * @internal
 */
export type ErrorCode = Extract<Control, { readonly type: "error" }>["code"]

// Compiled when the relay reads its first control frame (not by `Guard.lazily`: the relay's server
// loads this module without the rest of the library).
let decodeControl: ((u: unknown) => Either.Either<Control, ParseResult.ParseError>) | undefined

/**
 * A text message as a control frame, or why it is not one.
 *
 * @internal
 */
export const parseControl = (text: string): Either.Either<Control, string> => {
  let json: unknown
  try {
    json = parseJsonBoundary(text)
  } catch {
    return Either.left("a text message that is not JSON")
  }
  return Either.mapLeft(
    (decodeControl ??= Schema.decodeUnknownEither(makeControl()))(json),
    () => "an unknown control frame"
  )
}

/**
 * A control frame as a text message.
 *
 * @internal
 */
export const encodeControl = (frame: Control): string => JSON.stringify(frame)

/**
 * Bytes of one stream as a binary message.
 *
 * @internal
 */
export const encodeData = (stream: number, bytes: Uint8Array): Uint8Array => {
  const message = new Uint8Array(bytes.length + 1)
  message[0] = stream
  message.set(bytes, 1)
  return message
}

/**
 * The data messages for `bytes`, each at most `maxMessageBytes` long.
 *
 * @internal
 */
export const encodeDataSplit = (stream: number, bytes: Uint8Array, maxMessageBytes: number): Array<Uint8Array> => {
  const room = Math.max(1, maxMessageBytes - 1)
  if (bytes.length <= room) return [encodeData(stream, bytes)]
  const out: Array<Uint8Array> = []
  for (let at = 0; at < bytes.length; at += room) out.push(encodeData(stream, bytes.subarray(at, at + room)))
  return out
}

/**
 * A binary message's stream and bytes (a view, not a copy).
 *
 * @internal
 */
export const decodeData = (message: Uint8Array): { readonly stream: number; readonly bytes: Uint8Array } | undefined =>
  message.length === 0 ? undefined : { stream: message[0] ?? -1, bytes: message.subarray(1) }
