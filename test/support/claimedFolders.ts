// What the model saw of two claimed sessions, one per project folder: each request carries its own
// folder and model, not the other's, and not the folder the spares were parked in.
import { expect } from "@effect/vitest"
import * as ScriptedModel from "../../src/testing/ScriptedModel.js"

/** The folders of the claim tests: where spares park, and two projects. */
export interface Folders {
  readonly park: string
  readonly a: string
  readonly b: string
}

// What the model sees of a request: the system prompt and the messages.
const seen = (request: ScriptedModel.RecordedRequest | undefined) =>
  request === undefined ? "" : `${request.system}\n${JSON.stringify(request.messages)}`

/**
 * Checks the requests for "question alpha" (folder `a`, haiku) and "question beta" (folder `b`,
 * sonnet).
 */
export const expectEachInItsFolder = (requests: ReadonlyArray<ScriptedModel.RecordedRequest>, folders: Folders) => {
  const asked = (text: string) => requests.find((r) => ScriptedModel.lastUserText(r).includes(text))
  const alpha = asked("question alpha")
  const beta = asked("question beta")
  expect(alpha?.model).toBe("claude-haiku-4-5")
  expect(beta?.model).toBe("claude-sonnet-4-5")
  expect(seen(alpha)).toContain(folders.a)
  expect(seen(alpha)).not.toContain(folders.b)
  expect(seen(beta)).toContain(folders.b)
  expect(seen(beta)).not.toContain(folders.a)
  for (const request of [alpha, beta]) expect(seen(request)).not.toContain(folders.park)
}
