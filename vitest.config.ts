import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // The app's secret of every ledger the tests open over Postgres or a store of their own (which
    // refuse to open without one); tests of the key itself pass their own environment.
    env: { TOOL_LESSONS_KEY: "test-secret-of-the-suite-0123456789abcdef" },
    // The JSON report is what .ci/run reads for its closing "N passed, N failed" line.
    reporters: ["default", ["json", { outputFile: "test-results/vitest.json" }]],
  },
});
