// Name-based UUIDs (RFC 9562 version 5: SHA-1 of a namespace and a name), so that a conversation
// id maps to the same CLI session id on every runner, with no lookup. The cluster entry runs on
// Node (its runners spawn the CLI), so Node's synchronous hash serves.
import { createHash } from "node:crypto"

/** The version-5 UUID of `name` in `namespace` (a UUID). */
export const v5 = (namespace: string, name: string): string => {
  const hash = createHash("sha1").update(Buffer.from(namespace.replace(/-/g, ""), "hex")).update(name, "utf8").digest()
  hash[6] = ((hash[6] ?? 0) & 0x0f) | 0x50
  hash[8] = ((hash[8] ?? 0) & 0x3f) | 0x80
  const h = hash.subarray(0, 16).toString("hex")
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}
