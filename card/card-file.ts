// Reading and writing run-card.json. Writes are atomic (temp file + rename), so a crash leaves
// the previous card whole.
import { closeSync, constants, existsSync, fstatSync, openSync, readSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../common/atomic-file.js";
import { FormatError } from "../common/errors.js";
import { firstIssue } from "../common/parse.js";
import { RUN_CARD_FILE, RunCardShape, type RunCard } from "./run-card.js";

export function cardPath(outDir: string): string {
  return join(outDir, RUN_CARD_FILE);
}

export function writeCard(path: string, card: RunCard): void {
  writeFileAtomic(path, JSON.stringify(card, null, 2) + "\n");
}

/** The card as parsed JSON (every field, as written) and as typed; a clear error when it is no card. */
export function readCardFile(path: string): { raw: Record<string, unknown>; card: RunCard } {
  let raw: unknown;
  try {
    raw = JSON.parse(readBounded(path, MAX_CARD_BYTES));
  } catch (err) {
    throw new FormatError(path, undefined, undefined, `not a readable JSON file: ${(err as Error).message}`, { cause: err });
  }
  const parsed = RunCardShape.safeParse(raw);
  if (!parsed.success) {
    const { field, message } = firstIssue(parsed.error);
    throw new FormatError(path, undefined, field, `not a run card: ${message}`);
  }
  return { raw: raw as Record<string, unknown>, card: raw as RunCard };
}

/** Largest run-card.json read: a card is a few kB; a bound keeps a huge or endless file from stalling a reader. */
const MAX_CARD_BYTES = 64 * 1024 * 1024;

/** A regular file's text, at most `max` bytes; a FIFO or device is refused at once (opened without blocking). */
function readBounded(path: string, max: number): string {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new Error("not a regular file");
    if (st.size > max) throw new Error(`larger than ${max} bytes`);
    const buf = Buffer.alloc(st.size);
    let n = 0;
    while (n < st.size) {
      const got = readSync(fd, buf, n, st.size - n, n);
      if (got === 0) break;
      n += got;
    }
    return buf.subarray(0, n).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

/** The card already in `outDir`, when there is a readable one. */
export function previousCard(outDir: string): RunCard | undefined {
  const path = cardPath(outDir);
  if (!existsSync(path)) return undefined;
  try {
    return readCardFile(path).card;
  } catch {
    return undefined; // unreadable: this session writes a fresh one
  }
}
