// An error as it crosses between a worker thread (coordinator, suite reader, commit and score workers) and its host: class, message and
// the fields of a FormatError go across (structured clone keeps neither the class nor the fields),
// so the host throws what the worker threw and the CLI exits with the same code and message.
import { EXIT, FormatError, UdmError, UsageError } from "./errors.js";

export type ThreadError =
  | { kind: "FormatError"; message: string; file: string; line: number | undefined; field: string | undefined; problem: string }
  | { kind: "UsageError" | "UdmError" | "Error"; name: string; message: string };

export function encodeThreadError(err: unknown): ThreadError {
  if (err instanceof FormatError) return { kind: "FormatError", message: err.message, file: err.file, line: err.line, field: err.field, problem: err.problem };
  const e = err instanceof Error ? err : new Error(String(err));
  // A subclass travels as the base class with its exit code (2: usage, 1: failure) and its name.
  const kind = err instanceof UdmError ? (err.exitCode === EXIT.badInput ? "UsageError" : "UdmError") : "Error";
  return { kind, name: e.name, message: e.message };
}

export function decodeThreadError(e: ThreadError): Error {
  switch (e.kind) {
    case "FormatError":
      return new FormatError(e.file, e.line, e.field, e.problem);
    case "UsageError":
      return named(new UsageError(e.message), e.name);
    case "UdmError":
      return named(new UdmError(e.message), e.name);
    case "Error": {
      // Not one of ours: a failure, exit 1, with the original name kept in the message.
      return new UdmError(e.name && e.name !== "Error" ? `${e.name}: ${e.message}` : e.message);
    }
  }
}

function named<E extends Error>(err: E, name: string): E {
  if (name) err.name = name;
  return err;
}
