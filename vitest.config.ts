import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // End-to-end tests spawn the real CLI (≈300 ms start, ~40 MB each); two workers fit the 2-core machines.
    maxWorkers: 2,
    minWorkers: 1
  }
})
