// What a run (`run`, `coordinator`, each run of a `sweep`) tells the run card about its setup
// (method template, batch size, method class, price). The card itself is built in card/ from these,
// the coordinator's RunStatus, run.json and metrics.json.
import { join } from "node:path";
import { existsSync } from "node:fs";
import { openSuite } from "../common/suite/index.js";
import { LABEL_READ_TEMPLATE_TEXT, LABEL_READ_TEMPLATE_VERSION } from "../agent/index.js";
import type { RunOutcome } from "../coordinator/index.js";
import type { CardSetup, MethodClass } from "../card/index.js";

export const DATASET_ID = "udm-eval-v1";

/** Units each agent holds when none is asked for (the methods' default engine capacity). */
export const DEFAULT_AGENT_CAPACITY = 8;

/** The template label and text an engine method adds to prompts (label-read's; the others read engine-side). */
export function methodTemplate(method: string): { templateVersion: string | null; systemPrompt: string } {
  return method === "label-read" ? { templateVersion: LABEL_READ_TEMPLATE_VERSION, systemPrompt: LABEL_READ_TEMPLATE_TEXT } : { templateVersion: null, systemPrompt: "" };
}

export function cardSetup(o: {
  suiteDir: string;
  method: string;
  entryCount: number;
  batchSize: number | null;
  methodClass: MethodClass;
  gpuHourUsd: number;
}): CardSetup {
  return {
    datasetId: DATASET_ID,
    datasetVersion: suiteRevision(o.suiteDir),
    entryCount: o.entryCount,
    ...methodTemplate(o.method),
    batchSize: o.batchSize,
    toolsEnabled: [],
    trackFamilies: trackFamilies(o.suiteDir),
    methodClass: o.methodClass,
    gpuHourUsd: o.gpuHourUsd,
  };
}

/** Each track's family in the suite (none when it cannot be read: the card then records no families). */
export function trackFamilies(suiteDir: string): Record<string, string> {
  try {
    return Object.fromEntries(openSuite(suiteDir).files.map((f) => [f.track, f.family]));
  } catch {
    return {};
  }
}

function suiteRevision(suiteDir: string): string {
  try {
    const suite = openSuite(suiteDir);
    return suite.manifest?.revision ?? (existsSync(join(suite.root, "manifest.json")) ? "unknown" : "no manifest");
  } catch {
    return "unknown";
  }
}

/** The final counters of a stopped coordinator. */
export function countersAtEnd(outcome: RunOutcome): { leasesExpired: number; backupUnits: number; resultsRejected: number } {
  return { leasesExpired: outcome.counters.leasesExpired, backupUnits: outcome.counters.backupUnits, resultsRejected: outcome.counters.rejected };
}
