// The fingerprint a sweep run will have, known before it runs: so a rerun of the sweep skips runs
// whose card is already complete with it (the same dataset, model, condition, prompt, temperature,
// seeds, harness and scope).
import { decompressedSha256, openSuite, selectFiles, suiteIdentity } from "../../common/suite/index.js";
import { VERSION } from "../../common/version.js";
import { conditionOf } from "../build-card.js";
import { fingerprint, type FingerprintScope } from "../fingerprint.js";
import { RUN_CARD_FORMAT } from "../run-card.js";
import { sha256Hex } from "../../common/sha256.js";
import type { SweepRun } from "./sweep-config.js";

/** The suite identity the coordinator will report (docs/suite-format.md): manifest hashes, else the files' own. */
export async function datasetSha256(suiteDir: string): Promise<string> {
  const suite = openSuite(suiteDir);
  const hashes: Record<string, string> = {};
  for (const f of suite.files) hashes[f.relPath] = suite.manifest?.files[f.relPath]?.sha256.toLowerCase() ?? (await decompressedSha256(f.path));
  return suiteIdentity(hashes);
}

/** The scope a run over `filter` (and `limit` records per track) will record: the tracks it selects and their families, as the card writes them. */
export function scopeOf(suiteDir: string, filter: { tracks?: readonly string[]; families?: readonly string[] }, limit: number | null = null): FingerprintScope {
  const files = selectFiles(openSuite(suiteDir), { ...(filter.tracks ? { tracks: filter.tracks } : {}), ...(filter.families ? { families: filter.families } : {}) });
  return { tracks: [...new Set(files.map((f) => f.track))].sort(), families: [...new Set(files.map((f) => f.family))].sort(), limit };
}

/** `cardFormat`: the rule to compute by (a card's own, to compare with an older card). */
export function expectedFingerprint(
  run: SweepRun,
  datasetSha: string,
  template: { templateVersion: string | null; systemPrompt: string },
  scope: FingerprintScope,
  cardFormat: number = RUN_CARD_FORMAT,
): string {
  return fingerprint({
    cardFormat,
    datasetSha256: datasetSha,
    modelSlug: run.model,
    condition: conditionOf(run.method, template.templateVersion),
    systemPromptSha256: sha256Hex(template.systemPrompt),
    temperature: run.temperature,
    harnessVersion: VERSION,
    seeds: run.seeds,
    // Read by the format 2 rule only: a sweep's cards recorded null (each agent chooses).
    batchSize: null,
    toolsEnabled: [],
    scope,
  });
}
