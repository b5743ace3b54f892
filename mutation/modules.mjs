// The core modules under mutation testing (issue 24): each module's name and the source files (or
// line ranges, `file:from-to`) whose mutants count for it. stryker.config.mjs mutates all of them;
// check-scores.mjs holds each module to MIN_SCORE.

/** Least share of killed mutants, in percent, per module (killed + timeout over all valid mutants). */
export const MIN_SCORE = 85;

export const MODULES = [
  { name: "scorer metrics", files: ["scorer/metrics/*.ts"] },
  { name: "scorer accumulators", files: ["scorer/track-accumulator.ts", "common/suite/question-document.ts"] },
  { name: "scorer bootstrap", files: ["scorer/bootstrap.ts"] },
  { name: "scorer aggregation", files: ["scorer/aggregate.ts"] },
  { name: "card fingerprint", files: ["card/fingerprint.ts"] },
  { name: "card hash and sealing", files: ["card/card-hash.ts", "common/results/seal.ts"] },
  { name: "card verify", files: ["card/verify-card.ts"] },
  { name: "scheduler", files: ["coordinator/scheduler.ts"] },
  { name: "lease table", files: ["coordinator/lease-table.ts"] },
  { name: "planner", files: ["coordinator/planner.ts"] },
  { name: "result validator", files: ["coordinator/result-validator.ts"] },
  { name: "line writer", files: ["common/results/line-writer.ts", "common/results/line-bytes.ts", "common/results/answered-by.ts"] },
  {
    name: "authentication (gRPC, HTTP)",
    // The token check itself, and where the gRPC service and the HTTP routes call it.
    files: [
      "common/bearer-token.ts",
      "coordinator/transport/grpc-service.ts:100-112",
      "coordinator/observability/observability-routes.ts:35-39",
      "coordinator/observability/observability-routes.ts:63-67",
      "common/metrics/metrics-server.ts:54-57",
    ],
  },
  { name: "label trie", files: ["agent/methods/label-trie.ts"] },
  { name: "label tokens", files: ["agent/methods/label-tokens.ts"] },
  { name: "state fit", files: ["agent/methods/state-fit.ts"] },
  { name: "label-read", files: ["agent/methods/label-read.ts"] },
  { name: "distributions", files: ["agent/methods/engine-distribution.ts"] },
  { name: "results append log", files: ["common/results/append-log.ts"] },
  { name: "results format", files: ["common/results/format.ts"] },
  { name: "scored part reader", files: ["common/results/scored-part-reader.ts"] },
];

/**
 * What the first and last lines of each line range above hold: a range is lines by number, so an
 * edit above it moves the code out from under it (test/architecture/mutation-ranges.test.ts fails
 * then; update the range).
 */
export const RANGE_ENDS = {
  "coordinator/transport/grpc-service.ts:100-112": ["  private checkToken(md: grpc.Metadata): void {", "  }"],
  "coordinator/observability/observability-routes.ts:35-39": ["  const expected = options.token !== undefined ? Buffer.from(options.token) : undefined;", "  };"],
  "coordinator/observability/observability-routes.ts:63-67": ['      if (!url.pathname.startsWith("/api/")) return false;', "      }"],
  "common/metrics/metrics-server.ts:54-57": ["      if (metricsToken && !bearerMatches(req.headers.authorization, metricsToken)) {", "      }"],
};
