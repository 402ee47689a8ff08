// The tests that need PostgreSQL: `npm run test:cluster-pg` runs them inside
// scripts/ci/with-postgres.sh, which provides DATABASE_URL. Their files end in `.pgtest.ts`, so the
// main run (`npm test`, include `test/**/*.test.ts`) never picks them up.
import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"
import base from "../../vitest.config.js"

export default defineConfig({
  ...base,
  root: fileURLToPath(new URL("../..", import.meta.url)),
  test: {
    ...base.test,
    include: ["test/cluster-pg/**/*.pgtest.ts"],
    // Each test starts its own runner processes and CLIs: one at a time on a 2-core machine.
    fileParallelism: false,
    maxWorkers: 1,
    minWorkers: 1,
    testTimeout: 180_000,
    hookTimeout: 60_000
  }
})
