// Errors crossing a worker-thread boundary lose their class; these keep the typed error (and so the exit code).
import { FormatError, UdmError, UsageError } from "../common/errors.js";

export interface WireError {
  name: string;
  message: string;
  stack?: string;
  file?: string;
  line?: number;
  field?: string;
  problem?: string;
}

export function toWireError(err: unknown): WireError {
  if (err instanceof FormatError) return { name: "FormatError", message: err.message, file: err.file, line: err.line, field: err.field, problem: err.problem };
  if (err instanceof Error) return { name: err.name, message: err.message, ...(err.stack ? { stack: err.stack } : {}) };
  return { name: "Error", message: String(err) };
}

export function fromWireError(w: WireError): Error {
  if (w.name === "FormatError") return new FormatError(w.file ?? "?", w.line, w.field, w.problem ?? w.message);
  if (w.name === "UsageError") return new UsageError(w.message);
  if (w.name === "CheckFailedError" || w.name === "UdmError") return new UdmError(w.message);
  const e = new Error(w.message);
  if (w.stack) e.stack = w.stack;
  return e;
}
