// `card verify`: a card is what it claims when its fingerprint and run_card_hash recompute to the
// recorded values and, when its results files are beside it, each rehashes to its recorded sha256
// and no results file is there that the card does not list. With a suite, every score the card
// reports is also recomputed from those results files (card-scores.ts): a hash is no keyed seal, so
// only the recomputed numbers prove the card's. Results files are read only when they are regular
// files inside the card's directory (hashResultsFile): a hostile name is refused, never opened.
import { dirname } from "node:path";
import { FormatError } from "../common/errors.js";
import { hashResultsFile, relativeKey, resultFiles, sealResults } from "../common/results/index.js";
import { answeredByOf } from "./build-card.js";
import { scoreResultsWithInterval } from "../scorer/index.js";
import { runCardHash } from "./card-hash.js";
import { readCardFile } from "./card-file.js";
import { scoreDifferences } from "./card-scores.js";
import { componentsOfCard, fingerprint } from "./fingerprint.js";
import type { AnsweredShare, RunCard } from "./run-card.js";
import type { KeyObject } from "node:crypto";
import { checkSignature, type SignatureCheck } from "./card-signature.js";

export interface CardVerdict {
  path: string;
  card: RunCard | undefined;
  /** What differs; empty when the card verifies. */
  problems: string[];
  /** Results files rehashed (0 when none were beside the card). */
  filesChecked: number;
  resultsPresent: boolean;
  /** True when the scores were recomputed from the results files against a suite and agree. */
  scoresRecomputed: boolean;
  /** The card's signature (an invalid one is also among the problems). */
  signature: SignatureCheck;
}

export interface VerifyOptions {
  /** Suite to rescore the card's results files against; without it only seals are checked. */
  suiteDir?: string;
  /** Public keys (by key id) whose signatures count as trusted (readTrustedKeys). */
  trustedKeys?: ReadonlyMap<string, KeyObject>;
}

export async function verifyCard(path: string, options: VerifyOptions = {}): Promise<CardVerdict> {
  let parsed: ReturnType<typeof readCardFile>;
  try {
    parsed = readCardFile(path);
  } catch (err) {
    return { path, card: undefined, problems: [(err as Error).message], filesChecked: 0, resultsPresent: false, scoresRecomputed: false, signature: { state: "unsigned" } };
  }
  const { raw, card } = parsed;
  const problems: string[] = [];
  const fp = fingerprint(componentsOfCard(card));
  if (fp !== card.fingerprint) problems.push(`fingerprint: recorded ${card.fingerprint}, recomputed ${fp} (a method or dataset field was changed)`);
  const hash = runCardHash(raw);
  if (hash !== card.run_card_hash) problems.push(`run_card_hash: recorded ${card.run_card_hash}, recomputed ${hash} (the card was changed after it was sealed)`);
  // Checked against the recomputed hash: a signature of the recorded one proves nothing of an edited card.
  const signature = checkSignature(raw, hash, options.trustedKeys);
  if (signature.state === "invalid") problems.push(signature.problem);

  const dir = dirname(path);
  const listed = Object.entries(card.results_files);
  const hashed = new Map<string, Awaited<ReturnType<typeof hashResultsFile>>>();
  for (const [rel] of listed) hashed.set(rel, await hashResultsFile(dir, rel));
  const onDisk = safeResultFiles(dir).map((p) => relativeKey(dir, p));
  const presentListed = listed.filter(([rel]) => !("missing" in hashed.get(rel)!));
  const resultsPresent = presentListed.length > 0 || (listed.length === 0 && onDisk.length > 0);
  let filesChecked = 0;
  if (resultsPresent) {
    for (const [rel, sha] of listed) {
      const h = hashed.get(rel)!;
      if ("missing" in h) problems.push(`results file ${rel}: listed in the card, missing from ${dir}`);
      else if ("refused" in h) problems.push(`results file ${rel}: refused: ${h.refused}`);
      else {
        filesChecked++;
        if (h.sha256 !== sha) problems.push(`results file ${rel}: sha256 ${h.sha256}, card records ${sha}`);
      }
    }
    // A running card seals only finished tracks; a final one lists every results file there is.
    if (card.status !== "running") {
      const known = new Set(listed.map(([rel]) => rel));
      for (const rel of onDisk) if (!known.has(rel)) problems.push(`results file ${rel}: present in ${dir} but not sealed by the card`);
    }
  }
  // Without results present no listed file was refused either: a refused file counts as present.

  // The shares of the methods that answered, when the card records them, are the sealed files' own.
  if (resultsPresent && card.status !== "running" && problems.length === 0 && card.method.answered_by !== undefined) {
    let seal: ReturnType<typeof sealResults> | undefined;
    try {
      seal = sealResults(dir);
    } catch (err) {
      // A corrupted line in a file the card sealed (a card made before sealing refused them).
      if (!(err instanceof FormatError)) throw err;
      problems.push(`results file ${relativeKey(dir, err.file)}: ${err.message}`);
    }
    if (seal) problems.push(...answeredByDifferences(card.method.answered_by, answeredByOf(seal.answeredBy).answered_by ?? {}));
  }

  let scoresRecomputed = false;
  if (options.suiteDir !== undefined) {
    if (!resultsPresent) problems.push(`scores: the results files are not beside the card, so its scores cannot be recomputed`);
    else if (card.status === "running") problems.push(`scores: a running card's scores cannot be recomputed (it seals only finished tracks)`);
    else if (problems.length === 0) {
      // Rescored only when the files are the sealed ones: otherwise the differences say nothing more.
      try {
        const { metrics, v1Interval } = await scoreResultsWithInterval({ suiteDir: options.suiteDir, resultsDir: dir, tracks: card.dataset.tracks, ...(card.dataset.limit ? { limit: card.dataset.limit } : {}) });
        const diffs = scoreDifferences(card, metrics, v1Interval);
        problems.push(...diffs);
        scoresRecomputed = diffs.length === 0;
      } catch (err) {
        problems.push(`scores: cannot rescore the results files against ${options.suiteDir}: ${(err as Error).message}`);
      }
    }
  }
  return { path, card, problems, filesChecked, resultsPresent, scoresRecomputed, signature };
}

/** Each method whose recorded questions or share differ from the results files' count. */
function answeredByDifferences(recorded: Readonly<Record<string, AnsweredShare>>, recomputed: Readonly<Record<string, AnsweredShare>>): string[] {
  const out: string[] = [];
  for (const m of [...new Set([...Object.keys(recorded), ...Object.keys(recomputed)])].sort()) {
    const r = recorded[m];
    const c = recomputed[m];
    if (!r || !c || r.questions !== c.questions || r.share !== c.share) {
      out.push(`method.answered_by.${m}: card records ${r ? `${r.questions} questions (${r.share})` : "none"}, the results files have ${c ? `${c.questions} (${c.share})` : "none"}`);
    }
  }
  return out;
}

function safeResultFiles(dir: string): string[] {
  try {
    return resultFiles(dir);
  } catch {
    return [];
  }
}
