// The tests that need PostgreSQL: `npm run test:cluster-pg` runs them inside
// scripts/ci/with-postgres.sh, which provides DATABASE_URL. Their files end in `.pgtest.ts`, so the
// main run (`npm test`, include `test/**/*.test.ts`) never picks them up.
import { randomBytes } from "node:crypto"
import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"
import base from "../../vitest.config.js"

export default defineConfig({
  ...base,
  root: fileURLToPath(new URL("../..", import.meta.url)),
  test: {
    ...base.test,
    include: ["test/cluster-pg/**/*.pgtest.ts"],
    // The cluster's secret for this run: the runner processes inherit it, the client nodes the tests
    // build read it, as every node of a deployment reads AGENT_CLUSTER_SECRET.
    env: { AGENT_CLUSTER_SECRET: process.env.AGENT_CLUSTER_SECRET ?? randomBytes(32).toString("base64") },
    // Each test starts its own runner processes and CLIs: one at a time on a 2-core machine.
    fileParallelism: false,
    maxWorkers: 1,
    minWorkers: 1,
    testTimeout: 180_000,
    hookTimeout: 60_000
  }
})
