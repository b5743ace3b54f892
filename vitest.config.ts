import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Integration tests start real servers and processes; the CI machine has 2 cores.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    maxWorkers: 2,
    // Tests bind port 0 only: every process's --metrics (default 127.0.0.1:9470/9471) is read
    // from UDM_METRICS, which the CLI processes tests start inherit.
    env: { UDM_METRICS: "127.0.0.1:0" },
  },
});
