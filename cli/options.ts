// A CLI flag also reads an environment variable UDM_<FLAG> (docs/operations.md "Configuration"),
// which carries one meaning wherever it is read: a flag whose name another command uses for
// something else (leaderboard's --json <file> beside status's --json; score's and card reproduce's
// --out beside the run's results directory) is a localOpt() and reads no variable, so a variable
// exported for one command never steers another (UDM_JSON=1 wrote a leaderboard file named "1").
import { Option } from "commander";
import { flagEnvName } from "../common/env.js";
import { UsageError } from "../common/errors.js";

/** An option whose environment variable is derived from its long flag. */
export function opt(flags: string, description: string, defaultValue?: string | boolean | string[]): Option {
  const long = flags.split(/[ ,|]+/).find((f) => f.startsWith("--"));
  if (!long) throw new Error(`option without a long flag: ${flags}`);
  const o = new Option(flags, description).env(flagEnvName(long));
  if (defaultValue !== undefined) o.default(defaultValue);
  return o;
}

/** An option that reads no environment variable: its name means something else on another command. */
export function localOpt(flags: string, description: string, defaultValue?: string | boolean | string[]): Option {
  const o = new Option(flags, description);
  if (defaultValue !== undefined) o.default(defaultValue);
  return o;
}

/** "a,b" -> ["a", "b"]; undefined stays undefined. */
export function csv(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  return value.split(",").map((s) => s.trim()).filter(Boolean);
}

export function intArg(name: string, value: string | undefined, min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (value === undefined) return undefined;
  const n = value.trim() === "" ? NaN : Number(value);
  if (!Number.isInteger(n) || n < min || n > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `in ${min}..${max}`;
    throw new UsageError(`--${name} must be an integer ${range}, got ${JSON.stringify(value)}`);
  }
  return n;
}

/** A TCP port: 0 (any free port) to 65535. */
export function portArg(name: string, value: string | undefined): number | undefined {
  return intArg(name, value, 0, 65535);
}

export function numberArg(name: string, value: string | undefined, min = -Infinity): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n < min) throw new UsageError(`--${name} must be a number >= ${min}, got ${JSON.stringify(value)}`);
  return n;
}
