/**
 * `SessionStoreError` and its reasons, defined apart from the `SessionStore` service so that the
 * store implementations (which the service's static constructors import) can fail with it
 * without importing the service module back. Public through `SessionStore.SessionStoreError`.
 *
 * @internal
 */
import { Schema } from "effect"
import { TypeId } from "../../SdkError.js"
import { optionalString } from "../schema/schemas.js"

/**
 * The reasons a store operation fails (documented on `SessionStore.SessionStoreErrorReason`).
 *
 * @internal
 */
export const SessionStoreErrorReason = Schema.Literal("StaleWriter", "InvalidKey", "Corrupt", "Unavailable")

/**
 * A session store operation failed (documented on `SessionStore.SessionStoreError`).
 *
 * @internal
 */
export class SessionStoreError extends Schema.TaggedError<SessionStoreError>(
  "effect-claude-agent/SessionStoreError"
)("SessionStoreError", {
  reason: SessionStoreErrorReason,
  operation: Schema.String,
  sessionId: optionalString,
  detail: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    const session = this.sessionId === undefined ? "" : ` (session ${this.sessionId})`
    return `SessionStore.${this.operation} failed${session}: ${this.reason}: ${this.detail}`
  }
}
