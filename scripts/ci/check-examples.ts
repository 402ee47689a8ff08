// Type-checks every ```ts block under `@example` in src/ and lists each failure as
// `file:line:column TSxxxx: message` (exit code 1 if any). `npm test` runs the same check in
// test/unit/examples.test.ts, with test/unit/examples.allowlist.txt.
import { checkExamples, formatFailures } from "../../test/support/examples.js"

const started = Date.now()
const report = checkExamples()
const failing = new Set(report.failures.map((f) => f.example))
process.stdout.write(
  `${report.examples.length} examples, ${failing.size} failing (${Date.now() - started} ms)\n` +
    (report.failures.length > 0 ? `${formatFailures(report.failures)}\n` : "")
)
process.exitCode = report.failures.length > 0 ? 1 : 0
