// The tests Stryker runs against each mutant: the unit tests of the core modules (mutation/modules.mjs),
// in process. Not the integration tests that spawn dist/cli/main.js (a mutant in the sources never
// reaches them), nor the slow all-tracks method sweeps (methods-suite, oracle-methods: 50 s a run).
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: [
      "test/scorer/metrics.test.ts",
      "test/scorer/known-answers.test.ts",
      "test/scorer/score-results.test.ts",
      "test/scorer/prng.test.ts",
      "test/scorer/bootstrap.test.ts",
      "test/card/fingerprint.test.ts",
      "test/card/card-hash.test.ts",
      "test/card/sweep-plan.test.ts",
      "test/card/results-files.test.ts",
      "test/card/verify-card.test.ts",
      "test/coordinator/scheduler.test.ts",
      "test/coordinator/planner.test.ts",
      "test/coordinator/result-validator.test.ts",
      "test/coordinator/result-line.property.test.ts",
      "test/coordinator/wire-and-validation.property.test.ts",
      "test/coordinator/wire-fast-path.property.test.ts",
      "test/coordinator/agent-connection.test.ts",
      "test/coordinator/bearer-token.integration.test.ts",
      "test/coordinator/mutation-*.test.ts",
      "test/observability/metrics-token.test.ts",
      "test/agent/label-trie.test.ts",
      "test/agent/state-fit.test.ts",
      "test/agent/label-read.test.ts",
      "test/agent/label-read-bos.test.ts",
      "test/agent/label-read-chat-thinking.test.ts",
      "test/agent/label-tokens-merge.test.ts",
      "test/agent/engine-fidelity.test.ts",
      "test/agent/mutation-*.test.ts",
      "test/common/results/*.test.ts",
      "test/common/bearer-token.test.ts",
    ],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    env: { UDM_METRICS: "127.0.0.1:0" },
  },
});
