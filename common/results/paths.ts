// Where results live: `<out>/<family>/<track>.jsonl` per track, and the track a run_id belongs to.
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

export function trackResultsPath(outDir: string, family: string, track: string): string {
  return join(outDir, family, `${track}.jsonl`);
}

/** run_id is `<track>:<id>` (checked when the suite is read): the track is what precedes the first colon ("" when none). */
export function trackOfRunId(runId: string): string {
  const colon = runId.indexOf(":");
  return colon > 0 ? runId.slice(0, colon) : "";
}

/** `<out>/<family>/<track>.jsonl` for every family folder (dot folders skipped). */
export function trackFilesUnder(outDir: string): string[] {
  if (!existsSync(outDir)) return [];
  const out: string[] = [];
  for (const family of readdirSync(outDir).sort()) {
    if (family.startsWith(".")) continue;
    const dir = join(outDir, family);
    if (!statSync(dir).isDirectory()) continue;
    for (const name of readdirSync(dir).sort()) if (name.endsWith(".jsonl")) out.push(join(dir, name));
  }
  return out;
}
