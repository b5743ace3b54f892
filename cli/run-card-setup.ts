// What `run` and `coordinator` tell the run card about their setup (method template, batch size,
// method class, price). The card itself is built in card/ from these, the coordinator's RunStatus,
// run.json and metrics.json.
import { join } from "node:path";
import { existsSync } from "node:fs";
import { UsageError } from "../common/errors.js";
import { openSuite } from "../common/suite/index.js";
import { LABEL_READ_TEMPLATE_TEXT, LABEL_READ_TEMPLATE_VERSION } from "../agent/index.js";
import type { RunOutcome } from "../coordinator/index.js";
import { type CardSetup, METHOD_CLASSES, type MethodClass } from "../card/index.js";
import { opt } from "./options.js";

export const DATASET_ID = "udm-eval-v1";

/** Units each agent holds when none is asked for (the methods' default engine capacity). */
export const DEFAULT_AGENT_CAPACITY = 8;

/** --method-class; the card's price is --gpu-hour-usd (cli/metrics-flags.ts). */
export function cardOptions() {
  return [opt("--method-class <class>", `the protocol's method class for the run card (${METHOD_CLASSES.join(", ")})`, "raw-llm")];
}

export function parseMethodClass(value: string | undefined): MethodClass {
  const v = value ?? "raw-llm";
  if (!(METHOD_CLASSES as readonly string[]).includes(v)) throw new UsageError(`--method-class must be one of ${METHOD_CLASSES.join(", ")}, got ${JSON.stringify(v)}`);
  return v as MethodClass;
}

export function parseGpuHourUsd(value: string | undefined): number {
  if (value === undefined) return 0;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new UsageError(`--gpu-hour-usd must be a number >= 0 (0 = cost unknown), got ${JSON.stringify(value)}`);
  return n;
}

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
    methodClass: o.methodClass,
    gpuHourUsd: o.gpuHourUsd,
  };
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
