/**
 * The keys a conversation's data is stored under in the `TranscriptStore`, shared by the entity
 * (which writes them) and `AgentAdmin` (which deletes them).
 *
 * @internal
 */
import type { TranscriptStoreShape } from "../TranscriptStore.js"
import { v5 } from "./uuid.js"

/**
 * The namespace session ids are derived in: the store's, or the application's name within it.
 *
 * @internal
 */
export const namespaceOf = (store: TranscriptStoreShape, name: string | undefined): string =>
  name === undefined ? store.namespace : v5(store.namespace, name)

/**
 * The key of a conversation's last completed turn, stored beside its transcript.
 *
 * @internal
 */
export const lastTurnKey = (instance: { readonly sessionId: string }): string => v5(instance.sessionId, "last-turn")
