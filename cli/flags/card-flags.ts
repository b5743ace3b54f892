// The run card's flags: --method-class (where a coordinator runs; the card's price is --gpu-hour-usd,
// cli/metrics-flags.ts) and their checks, with usage errors that name the flag.
import type { Option } from "commander";
import { UsageError } from "../../common/errors.js";
import { METHOD_CLASSES, type MethodClass } from "../../card/index.js";
import { opt } from "../options.js";

/** --method-class; the card's price is --gpu-hour-usd (cli/metrics-flags.ts). */
export function cardOptions(): Option[] {
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
