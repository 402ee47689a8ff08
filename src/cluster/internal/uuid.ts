// Name-based UUIDs (RFC 9562 version 5: SHA-1 of a namespace and a name), so that a conversation
// id maps to the same CLI session id on every runner, with no lookup. The cluster entry runs on
// Node (its runners spawn the CLI), so Node's synchronous hash serves.
import { Effect, Random } from "effect"
import { createHash } from "node:crypto"

/** The version-5 UUID of `name` in `namespace` (a UUID). */
export const v5 = (namespace: string, name: string): string => {
  const hash = createHash("sha1").update(Buffer.from(namespace.replace(/-/g, ""), "hex")).update(name, "utf8").digest()
  hash[6] = ((hash[6] ?? 0) & 0x0f) | 0x50
  hash[8] = ((hash[8] ?? 0) & 0x3f) | 0x80
  const h = hash.subarray(0, 16).toString("hex")
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}

/** A random (version 4) UUID, from Effect's `Random` so that tests can seed it. */
export const v4: Effect.Effect<string> = Effect.gen(function*() {
  const bytes = yield* Effect.forEach(Array.from({ length: 16 }), () => Random.nextIntBetween(0, 256))
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80
  const h = bytes.map((b) => b.toString(16).padStart(2, "0")).join("")
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
})

/** The namespace of session ids, and of applications' namespaces within it (`LayerOptions.namespace`). */
export const defaultNamespace = "6f2c3b1e-1d0a-4a8e-9a55-2f9a3c1d7e40"
