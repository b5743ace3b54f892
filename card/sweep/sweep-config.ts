// sweep.yaml (docs/run-card.md "Sweeps"): a declared parameter space, expanded into runs
// models x methods x temperatures x seed-sets, each over the same track scope.
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { parseDocument } from "yaml";
import { z } from "zod";
import { FormatError, UsageError } from "../../common/errors.js";
import { modelNameProblem } from "../../common/engine-protocol/index.js";
import { firstIssue } from "../../common/parse.js";
import { sha256Hex } from "../../common/sha256.js";
import { METHOD_CLASSES } from "../run-card.js";

const ENGINE_METHODS = ["systemone", "decisions", "label-read"] as const;

/** Most runs a sweep may declare: the matrix is refused before it is expanded (3 million runs took GBs). */
export const MAX_SWEEP_RUNS = 10_000;

/** Aliases a sweep config may dereference: a few are handy, a nest of them expands exponentially. */
const MAX_YAML_ALIASES = 100;

/** Longest run directory name: longer ones keep a prefix and a hash of the whole (ENAMETOOLONG is at 255 bytes). */
export const MAX_RUN_NAME = 120;

const HOST_PORT = /^(\[[0-9a-fA-F:]+\]|[^:\s/[\]]+):(\d{1,5})$/;

/** HOST:PORT with a port 0..65535. */
export function isListenAddress(value: string): boolean {
  const m = HOST_PORT.exec(value);
  return m !== null && Number(m[2]) <= 65535;
}

const SweepConfigSchema = z.strictObject({
  /** Suite directory, relative to the config file. */
  suite: z.string().min(1),
  /** Root of the sweep's run directories and sweep.json, relative to the config file. */
  out: z.string().min(1),
  /** Address the sweep's coordinator listens on, and agents dial. */
  listen: z.string().refine(isListenAddress, "must be HOST:PORT (port 0..65535)").default("127.0.0.1:50051"),
  /** Model ids; held to a model id's characters (they reach the agents' --vllm-cmd templates). */
  models: z
    .array(
      z.string().superRefine((model, ctx) => {
        const problem = modelNameProblem(model);
        if (problem) ctx.addIssue({ code: "custom", message: problem });
      }),
    )
    .min(1),
  methods: z.array(z.enum(ENGINE_METHODS)).min(1).default(["systemone"]),
  temperatures: z.array(z.number().min(0)).min(1).default([0]),
  /** Label-permutation seed sets; [] = one read in natural order. */
  seed_sets: z.array(z.array(z.number().int().min(0))).min(1).default([[]]),
  tracks: z.array(z.string()).optional(),
  families: z.array(z.string()).optional(),
  method_class: z.enum(METHOD_CLASSES).default("raw-llm"),
  gpu_hour_usd: z.number().min(0).default(0),
  lease_ms: z.number().int().min(100).optional(),
  /** Records per track at most, whole groups (`--limit`): a smoke test of the matrix. */
  limit: z.number().int().min(1).optional(),
});
export type SweepConfig = z.infer<typeof SweepConfigSchema> & { path: string; suiteDir: string; outDir: string };

export interface SweepRun {
  /** Directory name under the sweep's out: model, method, temperature and seeds, filesystem-safe. */
  name: string;
  model: string;
  method: (typeof ENGINE_METHODS)[number];
  temperature: number;
  seeds: number[];
}

export function readSweepConfig(path: string): SweepConfig {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new UsageError(`cannot read sweep config ${path}: ${(err as Error).message}`);
  }
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    throw new FormatError(path, e.linePos?.[0]?.line, undefined, `not valid YAML: ${e.message.split("\n")[0]}`);
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_YAML_ALIASES });
  } catch (err) {
    // The yaml package refuses an alias bomb here (ReferenceError), past its parse.
    throw new FormatError(path, undefined, undefined, `not valid YAML: ${(err as Error).message.split("\n")[0]} (at most ${MAX_YAML_ALIASES} aliases)`);
  }
  const parsed = SweepConfigSchema.safeParse(value);
  if (!parsed.success) {
    const { field, message } = firstIssue(parsed.error);
    const node = field ? doc.getIn(field.split("."), true) : undefined;
    const range = (node as { range?: [number, number, number] } | undefined)?.range;
    const line = range ? text.slice(0, range[0]).split("\n").length : undefined;
    throw new FormatError(path, line, field || undefined, message);
  }
  const base = dirname(resolve(path));
  return { ...parsed.data, path: resolve(path), suiteDir: resolve(base, parsed.data.suite), outDir: resolve(base, parsed.data.out) };
}

/** The matrix, model-major (consecutive runs share a model, so engines restart once per model). */
export function expandSweep(c: Pick<SweepConfig, "models" | "methods" | "temperatures" | "seed_sets">): SweepRun[] {
  const size = c.models.length * c.methods.length * c.temperatures.length * c.seed_sets.length;
  if (size > MAX_SWEEP_RUNS) {
    throw new UsageError(
      `sweep config: ${c.models.length} models x ${c.methods.length} methods x ${c.temperatures.length} temperatures x ${c.seed_sets.length} seed sets = ${size} runs, more than the ${MAX_SWEEP_RUNS} a sweep may declare; split it`,
    );
  }
  const runs: SweepRun[] = [];
  const names = new Set<string>();
  for (const model of c.models)
    for (const method of c.methods)
      for (const temperature of c.temperatures)
        for (const seeds of c.seed_sets) {
          const name = runName(model, method, temperature, seeds);
          if (names.has(name)) throw new UsageError(`sweep config: the run ${name} appears twice (repeated model, method, temperature or seed set)`);
          names.add(name);
          runs.push({ name, model, method, temperature, seeds: [...seeds] });
        }
  return runs;
}

export function runName(model: string, method: string, temperature: number, seeds: readonly number[]): string {
  const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]+/g, "_");
  const name = `${safe(model)}__${method}__t${temperature}__seeds-${seeds.length ? seeds.join("-") : "none"}`;
  if (name.length <= MAX_RUN_NAME) return name;
  // The hash is of the run's own values, so two long names that share a prefix stay apart.
  const hash = sha256Hex(JSON.stringify([model, method, temperature, seeds])).slice(0, 16);
  return `${name.slice(0, MAX_RUN_NAME - hash.length - 2)}__${hash}`;
}
