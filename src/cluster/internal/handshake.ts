/**
 * The cluster handshake's frames and proofs, without I/O: a mutual challenge-response over a
 * shared secret, run once per TCP connection between cluster nodes before any RPC byte.
 *
 * 1. runner → peer: `MAGIC` (4 bytes) and a fresh random server nonce (32 bytes);
 * 2. peer → runner: a fresh client nonce (32 bytes) and
 *    `HMAC-SHA256(key, "client" ‖ serverNonce ‖ clientNonce)` (32 bytes);
 * 3. runner → peer: `HMAC-SHA256(key, "server" ‖ serverNonce ‖ clientNonce)` (32 bytes), sent only
 *    when the peer's proof holds; otherwise the runner closes the connection.
 *
 * A recorded step 2 proves nothing on another connection (its server nonce differs), the two
 * directions carry different labels (a proof cannot be reflected back), and the secret never
 * crosses the wire.
 *
 * @internal
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"

/** @internal Protocol tag and version: a peer speaking anything else is refused at once. */
export const MAGIC: Uint8Array = Uint8Array.of(0x45, 0x43, 0x41, 0x01) // "ECA" v1

/** @internal Bytes of each nonce and each proof. */
export const NONCE_BYTES = 32

/** @internal The runner's first frame: magic and server nonce. */
export const HELLO_BYTES = MAGIC.length + NONCE_BYTES

/** @internal The peer's frame: client nonce and client proof. */
export const RESPONSE_BYTES = NONCE_BYTES * 2

/** @internal The runner's last frame: its proof. */
export const CONFIRM_BYTES = NONCE_BYTES

/** @internal A fresh nonce. */
export const nonce = (): Uint8Array => randomBytes(NONCE_BYTES)

const proof = (key: Uint8Array, label: "client" | "server", serverNonce: Uint8Array, clientNonce: Uint8Array) =>
  createHmac("sha256", key).update(label).update(serverNonce).update(clientNonce).digest()

/** @internal The runner's hello for `serverNonce`. */
export const hello = (serverNonce: Uint8Array): Uint8Array => Buffer.concat([MAGIC, serverNonce])

/** @internal The server nonce of a hello, or `undefined` when it is not one of ours. */
export const parseHello = (frame: Uint8Array): Uint8Array | undefined =>
  frame.length === HELLO_BYTES && MAGIC.every((byte, i) => frame[i] === byte)
    ? frame.subarray(MAGIC.length)
    : undefined

/** @internal The peer's response to a hello: its nonce and its proof. */
export const respond = (key: Uint8Array, serverNonce: Uint8Array, clientNonce: Uint8Array): Uint8Array =>
  Buffer.concat([clientNonce, proof(key, "client", serverNonce, clientNonce)])

/**
 * @internal The client nonce of `response` when its proof holds for `serverNonce`, else
 * `undefined`. Compared in constant time.
 */
export const checkResponse = (
  key: Uint8Array,
  serverNonce: Uint8Array,
  response: Uint8Array
): Uint8Array | undefined => {
  if (response.length !== RESPONSE_BYTES) return undefined
  const clientNonce = response.subarray(0, NONCE_BYTES)
  return timingSafeEqual(proof(key, "client", serverNonce, clientNonce), response.subarray(NONCE_BYTES))
    ? clientNonce
    : undefined
}

/** @internal The runner's confirmation, proving it holds the key too. */
export const confirm = (key: Uint8Array, serverNonce: Uint8Array, clientNonce: Uint8Array): Uint8Array =>
  proof(key, "server", serverNonce, clientNonce)

/** @internal Whether the runner's confirmation holds. Compared in constant time. */
export const checkConfirm = (
  key: Uint8Array,
  serverNonce: Uint8Array,
  clientNonce: Uint8Array,
  frame: Uint8Array
): boolean => frame.length === CONFIRM_BYTES && timingSafeEqual(confirm(key, serverNonce, clientNonce), frame)
