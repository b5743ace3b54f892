// Routing outcome metrics (docs/scoring.md "routing_outcome"): the predicted route judged by its recorded outcome.

export interface RoutingItem {
  /** Predicted route (argmax of the `route` question); null when missing. */
  pred: string | null;
  accepted: ReadonlySet<string> | readonly string[];
  outcomes: Readonly<Record<string, { quality?: number; cost_usd?: number }>>;
}

export interface RoutingMetrics {
  accepted_accuracy: number | null;
  mean_quality: number | null;
  mean_cost_usd: number | null;
  oracle_quality: number | null;
  n: number;
  missing: number;
}

function isAccepted(accepted: RoutingItem["accepted"], route: string): boolean {
  return accepted instanceof Set ? accepted.has(route) : (accepted as readonly string[]).includes(route);
}

export function routingMetrics(items: readonly RoutingItem[]): RoutingMetrics {
  let accepted = 0;
  let missing = 0;
  let qSum = 0;
  let qN = 0;
  let cSum = 0;
  let cN = 0;
  let oSum = 0;
  let oN = 0;
  for (const item of items) {
    let best = -Infinity;
    // Stryker disable next-line ConditionalExpression,EqualityOperator: quality is a number or absent (common/suite/schema.ts), and undefined > best is false; ">=" keeps an equal best
    for (const o of Object.values(item.outcomes)) if (typeof o.quality === "number" && o.quality > best) best = o.quality;
    if (best !== -Infinity) {
      oSum += best;
      oN++;
    }
    if (item.pred === null) {
      missing++;
      continue;
    }
    if (isAccepted(item.accepted, item.pred)) accepted++;
    const outcome = item.outcomes[item.pred];
    if (typeof outcome?.quality === "number") {
      qSum += outcome.quality;
      qN++;
    }
    if (typeof outcome?.cost_usd === "number") {
      cSum += outcome.cost_usd;
      cN++;
    }
  }
  const n = items.length;
  return {
    accepted_accuracy: n === 0 ? null : accepted / n,
    mean_quality: qN === 0 ? null : qSum / qN,
    mean_cost_usd: cN === 0 ? null : cSum / cN,
    oracle_quality: oN === 0 ? null : oSum / oN,
    n,
    missing,
  };
}
