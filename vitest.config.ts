import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

export default defineConfig({
  // Tests import the package by its name, as users do (the README's examples run as written).
  resolve: {
    alias: [
      { find: /^effect-claude-agent$/, replacement: fileURLToPath(new URL("./src/index.ts", import.meta.url)) },
      {
        find: /^effect-claude-agent\/testing$/,
        replacement: fileURLToPath(new URL("./src/testing/index.ts", import.meta.url))
      },
      {
        find: /^effect-claude-agent\/cluster$/,
        replacement: fileURLToPath(new URL("./src/cluster/index.ts", import.meta.url))
      },
      {
        find: /^effect-claude-agent\/relay$/,
        replacement: fileURLToPath(new URL("./src/relay/index.ts", import.meta.url))
      }
    ]
  },
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // End-to-end tests spawn the real CLI (≈300 ms start, ~40 MB each); two workers fit the 2-core machines.
    maxWorkers: 2,
    minWorkers: 1
  }
})
