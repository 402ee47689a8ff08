/**
 * How a conversation id names its CLI session, shared by the entity (which opens the session) and
 * `AgentAdmin` (which deletes it).
 *
 * @internal
 */
import { defaultNamespace, v5 } from "./uuid.js"

/**
 * The namespace session ids are derived in: the cluster's, or the application's name within it.
 *
 * @internal
 */
export const namespaceOf = (name: string | undefined): string =>
  name === undefined ? defaultNamespace : v5(defaultNamespace, name)
