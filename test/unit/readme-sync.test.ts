// The README's test example and test/unit/readme.test.ts must stay the same code.
import { expect, it } from "@effect/vitest"
import * as fs from "node:fs"

it("test/unit/readme.test.ts is the README's test example, verbatim", () => {
  const readme = fs.readFileSync(new URL("../../README.md", import.meta.url), "utf8")
  const test = fs.readFileSync(new URL("./readme.test.ts", import.meta.url), "utf8")
  const body = test.split("\n").slice(1).join("\n").trim()
  expect(body.length).toBeGreaterThan(200)
  expect(readme).toContain(body)
})
