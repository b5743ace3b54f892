// The run card's flags: --method-class (where a coordinator runs; the card's price is --gpu-hour-usd,
// cli/metrics-flags.ts) and their checks, with usage errors that name the flag.
import type { Option } from "commander";
import { UsageError } from "../../common/errors.js";
import type { KeyObject } from "node:crypto";
import { METHOD_CLASSES, readSigningKey, type MethodClass } from "../../card/index.js";
import { opt } from "../options.js";
import { flagGroup, flagOptions } from "../flag-group.js";

/** What the run card's flags set. */
export interface CardFlagOptions {
  /** The protocol's method class. @default "raw-llm" */
  methodClass: MethodClass;
}

export const CARD_FLAG_DEFAULTS: CardFlagOptions = { methodClass: "raw-llm" };

export const CARD_FLAGS = flagGroup<CardFlagOptions>(CARD_FLAG_DEFAULTS, [
  { key: "methodClass", flags: "--method-class <class>", description: `the protocol's method class for the run card (${METHOD_CLASSES.join(", ")})`, parse: (raw) => parseMethodClass(raw) },
]);

/** --method-class and --sign-key; the card's price is --gpu-hour-usd (cli/metrics-flags.ts). */
export function cardOptions(): Option[] {
  return [...flagOptions(CARD_FLAGS), signKeyOption()];
}

/** --sign-key FILE: sign the run card (each write of it) with an ed25519 private key in PEM. */
export function signKeyOption(): Option {
  return opt("--sign-key <file>", "sign the run card with this ed25519 private key (PEM; e.g. openssl genpkey -algorithm ed25519 -out key.pem); card verify --trusted-keys checks it");
}

/** The key of --sign-key, read (and checked) before anything runs. */
export function signKeyFrom(flags: { signKey?: string }): KeyObject | undefined {
  return flags.signKey === undefined ? undefined : readSigningKey(flags.signKey);
}

export function parseMethodClass(value: string | undefined): MethodClass {
  const v = value ?? CARD_FLAG_DEFAULTS.methodClass;
  if (!(METHOD_CLASSES as readonly string[]).includes(v)) throw new UsageError(`--method-class must be one of ${METHOD_CLASSES.join(", ")}, got ${JSON.stringify(v)}`);
  return v as MethodClass;
}

export function parseGpuHourUsd(value: string | undefined): number {
  if (value === undefined) return 0;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new UsageError(`--gpu-hour-usd must be a number >= 0 (0 = cost unknown), got ${JSON.stringify(value)}`);
  return n;
}
