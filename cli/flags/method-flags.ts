// The engine method of a run: --method (one list of names, agent/method-table.ts), --seeds, --model,
// --temperature. `coordinator` names the method its agents run; `run` builds its agents with it and
// checks the flags as `agent` does. The two keep their own error messages for the same flags.
import { UsageError } from "../../common/errors.js";
import { METHODS, methodFactory } from "../../agent/index.js";
import { flagGroup, type FlagSpec } from "../flag-group.js";
import { csv, intArg, numberArg } from "../options.js";
import { parseSeeds } from "../engine-methods.js";
import { COORDINATOR_DEFAULTS } from "../../coordinator/index.js";

/** The method a run asks of its agents (coordinator/run-manifest.ts MethodConfig). */
export interface MethodFlagOptions {
  /** @default "systemone" */
  method: string;
  /** Label-permutation seeds. @default [] (one read in natural order) */
  seeds: number[];
  /** @default 0 */
  temperature: number;
  /** Model asked of the engine. @default "" (the engine's own) */
  model: string;
}

const METHOD_NAMES = Object.keys(METHODS);

const SEEDS: FlagSpec<MethodFlagOptions> = { key: "seeds", flags: "--seeds <list>", description: "comma-separated label-permutation seeds", defaultText: "one read in natural order" };

const MODEL: FlagSpec<MethodFlagOptions> = { key: "model", flags: "--model <name>", description: "model agents ask their engine for", defaultText: "the engine's own" };

/** `coordinator`: the method its agents run, by name; integer seeds; temperature. */
export const CLUSTER_METHOD_FLAGS = flagGroup<MethodFlagOptions>(COORDINATOR_DEFAULTS.method, [
  {
    key: "method",
    flags: "--method <name>",
    description: `engine method agents run (${METHOD_NAMES.join(", ")})`,
    parse: (raw) => {
      if (!METHOD_NAMES.includes(raw)) throw new UsageError(`--method must be one of ${METHOD_NAMES.join(", ")}, got ${JSON.stringify(raw)}`);
      return raw;
    },
  },
  { ...SEEDS, parse: (raw, flag) => (csv(raw) ?? []).map((s) => intArg(flag, s)!) },
  { key: "temperature", flags: "--temperature <t>", description: "sampling temperature asked of the engine", parse: (raw, flag) => numberArg(flag, raw, 0)! },
  MODEL,
]);

/** `run`: the method of its own agents, checked as `agent --method` and `agent --seeds` check it. */
export const AGENT_METHOD_FLAGS = flagGroup<MethodFlagOptions>(COORDINATOR_DEFAULTS.method, [
  { key: "method", flags: "--method <name>", description: `engine method (${METHOD_NAMES.join(", ")})`, parse: (raw) => (methodFactory(raw), raw) },
  { ...SEEDS, description: "label-permutation seeds averaged per question, e.g. 0,1,2", parse: (raw) => parseSeeds(raw) },
  MODEL,
]);
