// `udm-orch diff RUN_A RUN_B`: two runs of the same suite and scope compared record by record
// (scorer/paired-compare.ts). Runs over other suites, tracks or limits answer different questions:
// they are refused, saying why, before anything is read.
import { UsageError } from "../common/errors.js";
import { compareRuns, type RunComparison } from "../scorer/index.js";
import { checkSuiteIdentity, trackResultFiles, type RunDir } from "./run-dir.js";

export interface RunDiff extends RunComparison {
  a: RunSide;
  b: RunSide;
  suite: { root: string; identity: string };
  scope: { tracks: number; limit: number | null };
}

export interface RunSide {
  dir: string;
  run_id: string;
  model: string;
  method: string;
  seeds: number[];
}

/** Why two runs cannot be compared record by record, or undefined when they can. */
export function diffRefusal(a: RunDir, b: RunDir): string | undefined {
  if (a.run.suite_identity !== b.run.suite_identity) {
    return `the runs are on different suites: ${a.dir} on ${a.run.suite_identity.slice(0, 12)}, ${b.dir} on ${b.run.suite_identity.slice(0, 12)}`;
  }
  const ta = new Set(a.run.tracks);
  const tb = new Set(b.run.tracks);
  const onlyA = [...ta].filter((t) => !tb.has(t)).sort();
  const onlyB = [...tb].filter((t) => !ta.has(t)).sort();
  if (onlyA.length > 0 || onlyB.length > 0) {
    const list = (xs: string[]) => (xs.length > 5 ? `${xs.slice(0, 5).join(", ")} and ${xs.length - 5} more` : xs.join(", ") || "none");
    return `the runs cover different scopes: tracks only in ${a.dir}: ${list(onlyA)}; only in ${b.dir}: ${list(onlyB)}`;
  }
  if (a.limit !== b.limit) {
    const say = (l: number | undefined) => (l === undefined ? "every record" : `--limit ${l}`);
    return `the runs cover different scopes: ${a.dir} has ${say(a.limit)}, ${b.dir} has ${say(b.limit)}`;
  }
  return undefined;
}

export async function diffRuns(a: RunDir, b: RunDir, options: { permutations?: number } = {}): Promise<RunDiff> {
  const refusal = diffRefusal(a, b);
  if (refusal) throw new UsageError(`cannot diff: ${refusal}`);
  await checkSuiteIdentity(a);
  const comparison = await compareRuns({
    suite: a.suite,
    scope: a.scope,
    resultsOf: (run, file) => trackResultFiles(run === "a" ? a.dir : b.dir, file),
    ...(a.limit !== undefined ? { limit: a.limit } : {}),
    ...(options.permutations !== undefined ? { permutations: options.permutations } : {}),
  });
  return {
    ...comparison,
    a: sideOf(a),
    b: sideOf(b),
    suite: { root: a.suite.root, identity: a.run.suite_identity },
    scope: { tracks: a.scope.length, limit: a.limit ?? null },
  };
}

function sideOf(r: RunDir): RunSide {
  return { dir: r.dir, run_id: r.run.run_id, model: r.card?.method.model_slug || r.run.method.model || "", method: r.run.method.method, seeds: [...r.run.method.seeds] };
}
