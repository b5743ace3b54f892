// The fingerprint a sweep run will have, known before it runs: so a rerun of the sweep skips runs
// whose card is already complete with it (the same dataset, model, condition, prompt, temperature,
// harness and batch size).
import { decompressedSha256, openSuite, suiteIdentity } from "../../common/suite/index.js";
import { VERSION } from "../../common/version.js";
import { conditionOf } from "../build-card.js";
import { fingerprint } from "../fingerprint.js";
import { sha256Hex } from "../../common/sha256.js";
import type { SweepRun } from "./sweep-config.js";

/** The suite identity the coordinator will report (SUITE_FORMAT.md): manifest hashes, else the files' own. */
export async function datasetSha256(suiteDir: string): Promise<string> {
  const suite = openSuite(suiteDir);
  const hashes: Record<string, string> = {};
  for (const f of suite.files) hashes[f.relPath] = suite.manifest?.files[f.relPath]?.sha256.toLowerCase() ?? (await decompressedSha256(f.path));
  return suiteIdentity(hashes);
}

export function expectedFingerprint(
  run: SweepRun,
  datasetSha: string,
  template: { templateVersion: string | null; systemPrompt: string },
  batchSize: number | null,
): string {
  return fingerprint({
    datasetSha256: datasetSha,
    modelSlug: run.model,
    condition: conditionOf(run.method, template.templateVersion),
    systemPromptSha256: sha256Hex(template.systemPrompt),
    temperature: run.temperature,
    harnessVersion: VERSION,
    batchSize,
    toolsEnabled: [],
  });
}
