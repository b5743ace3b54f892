// The fast reader of a results line: the part the scorer reads, checked by hand, with the schema
// (format.ts) as the fallback that words the error.
import { parseOrThrow } from "../parse.js";
import { ResultLineSchema, type ResultInput } from "./format.js";

/**
 * Parses one results line into what the scorer reads; FormatError names file, line and field
 * (after `prefix`, when given).
 */
export function parseResultLine(file: string, line: number, value: unknown, prefix?: string): ResultInput {
  const fast = plainResultLine(value);
  if (fast) return fast;
  const parsed = parseOrThrow(ResultLineSchema, value, { file, line, ...(prefix !== undefined ? { prefix } : {}) });
  return { run_id: parsed.run_id, probs: parsed.probs, skipped: parsed.skipped, ...(parsed.errors ? { errors: parsed.errors } : {}) };
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * The well-formed line, checked by hand: the results of a full suite are ~60k lines and zod costs
 * more than the JSON parse. Anything unusual goes to the schema, which also words the error.
 */
function plainResultLine(value: unknown): ResultInput | undefined {
  if (!isPlainObject(value)) return undefined;
  const { run_id, probs, skipped, errors } = value;
  if (typeof run_id !== "string") return undefined;
  for (const k of ["id", "track", "family"]) if (value[k] !== undefined && typeof value[k] !== "string") return undefined;
  if (probs !== undefined && !isPlainObject(probs)) return undefined;
  if (skipped !== undefined && !(Array.isArray(skipped) && skipped.every((s) => typeof s === "string"))) return undefined;
  if (errors !== undefined && !(isPlainObject(errors) && Object.values(errors).every((e) => typeof e === "string"))) return undefined;
  return { run_id, probs: probs ?? {}, skipped: (skipped as string[] | undefined) ?? [], ...(errors ? { errors } : {}) };
}
