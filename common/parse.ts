// Schema checks that end in a FormatError naming file, line and field: the one place the first
// zod issue is worded for a user.
import { readFileSync } from "node:fs";
import type { z } from "zod";
import { FormatError } from "./errors.js";

/** Dotted path of the first zod issue, for error messages that name a field. */
export function firstIssue(error: z.ZodError): { field: string; message: string } {
  const issue = error.issues[0];
  return { field: issue ? issue.path.map(String).join(".") : "", message: issue ? issue.message : error.message };
}

export interface Where {
  file: string;
  line?: number | undefined;
  /** Put before zod's message, e.g. "not a results line: ". */
  prefix?: string;
}

/** `schema.parse(value)`, or a FormatError at `where` naming the first issue's field. */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, where: Where): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const { field, message } = firstIssue(parsed.error);
  throw new FormatError(where.file, where.line, field || undefined, `${where.prefix ?? ""}${message}`);
}

/** A whole JSON file checked against `schema`; bad JSON and schema issues are FormatErrors naming the file. */
export function readJsonFileOrThrow<S extends z.ZodType>(path: string, schema: S): z.output<S> {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new FormatError(path, undefined, undefined, `bad JSON: ${(err as Error).message}`, { cause: err });
  }
  return parseOrThrow(schema, raw, { file: path });
}
