// `card verify`: a card is what it claims when its fingerprint and run_card_hash recompute to the
// recorded values and, when its results files are beside it, each rehashes to its recorded sha256
// and no results file is there that the card does not list.
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { relativeKey, resultFiles } from "../common/results/index.js";
import { runCardHash } from "./card-hash.js";
import { readCardFile } from "./card-file.js";
import { componentsOfCard, fingerprint } from "./fingerprint.js";
import { fileSha256 } from "../common/sha256.js";
import type { RunCard } from "./run-card.js";

export interface CardVerdict {
  path: string;
  card: RunCard | undefined;
  /** What differs; empty when the card verifies. */
  problems: string[];
  /** Results files rehashed (0 when none were beside the card). */
  filesChecked: number;
  resultsPresent: boolean;
}

export async function verifyCard(path: string): Promise<CardVerdict> {
  let parsed: ReturnType<typeof readCardFile>;
  try {
    parsed = readCardFile(path);
  } catch (err) {
    return { path, card: undefined, problems: [(err as Error).message], filesChecked: 0, resultsPresent: false };
  }
  const { raw, card } = parsed;
  const problems: string[] = [];
  const fp = fingerprint(componentsOfCard(card));
  if (fp !== card.fingerprint) problems.push(`fingerprint: recorded ${card.fingerprint}, recomputed ${fp} (a method or dataset field was changed)`);
  const hash = runCardHash(raw);
  if (hash !== card.run_card_hash) problems.push(`run_card_hash: recorded ${card.run_card_hash}, recomputed ${hash} (the card was changed after it was sealed)`);

  const dir = dirname(path);
  const listed = Object.entries(card.results_files);
  const presentListed = listed.filter(([rel]) => existsSync(join(dir, rel)));
  const onDisk = safeResultFiles(dir).map((p) => relativeKey(dir, p));
  const resultsPresent = presentListed.length > 0 || (listed.length === 0 && onDisk.length > 0);
  let filesChecked = 0;
  if (resultsPresent) {
    for (const [rel, sha] of listed) {
      const file = join(dir, rel);
      if (!existsSync(file)) {
        problems.push(`results file ${rel}: listed in the card, missing from ${dir}`);
        continue;
      }
      const actual = await fileSha256(file);
      filesChecked++;
      if (actual !== sha) problems.push(`results file ${rel}: sha256 ${actual}, card records ${sha}`);
    }
    // A running card seals only finished tracks; a final one lists every results file there is.
    if (card.status !== "running") {
      const known = new Set(listed.map(([rel]) => rel));
      for (const rel of onDisk) if (!known.has(rel)) problems.push(`results file ${rel}: present in ${dir} but not sealed by the card`);
    }
  }
  return { path, card, problems, filesChecked, resultsPresent };
}

function safeResultFiles(dir: string): string[] {
  try {
    return resultFiles(dir);
  } catch {
    return [];
  }
}
