// Which files are a run's results: every *.jsonl and *.jsonl.gz below the results directory, in
// path order (a later line for the same run_id wins, so the order is part of the result). What
// `score` reads and what a run card seals (seal.ts).
import { createHash } from "node:crypto";
import { closeSync, constants, createReadStream, fstatSync, lstatSync, openSync, readdirSync, realpathSync } from "node:fs";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import { UsageError } from "../errors.js";

/** Every `*.jsonl` and `*.jsonl.gz` below dir, sorted by path. */
export function resultFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, entry.name);
      if (entry.isDirectory()) walk(p);
      else if (entry.isFile() && (entry.name.endsWith(".jsonl") || entry.name.endsWith(".jsonl.gz"))) out.push(p);
    }
  };
  try {
    walk(dir);
  } catch (err) {
    throw new UsageError(`cannot read results directory ${dir}: ${(err as Error).message}`, { cause: err });
  }
  const key = (p: string): string => relativeKey(dir, p);
  return out.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/** A results file's path relative to the run directory, with `/` (the run card's key). */
export function relativeKey(dir: string, path: string): string {
  return relative(dir, path).split(sep).join("/");
}

/** Largest results file a card's check reads (a bound, so a huge or endless file cannot stall it). */
export const MAX_RESULTS_FILE_BYTES = 16 * 1024 ** 3;

/**
 * The sha256 of the results file `key` names below `dir`, or why it is refused: the key must stay
 * inside dir (no absolute path, no `..`), and the file must be a regular file whose real path is
 * inside dir's (no symlink out, no device or FIFO), at most `maxBytes`. Opened without following a
 * last symlink and without blocking (a FIFO opens, then fails the regular-file check), so a hostile
 * name is refused at once. `missing` when there is no such file.
 */
export async function hashResultsFile(dir: string, key: string, maxBytes = MAX_RESULTS_FILE_BYTES): Promise<{ sha256: string } | { missing: true } | { refused: string }> {
  if (isAbsolute(key) || key.split(/[/\\]/).some((seg) => seg === "..")) return { refused: "not a path inside the card's directory" };
  const path = resolve(dir, key);
  let st;
  try {
    st = lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { missing: true };
    return { refused: `cannot read: ${(err as Error).message}` };
  }
  if (st.isSymbolicLink()) return { refused: "a symbolic link, not a results file" };
  if (!st.isFile()) return { refused: "not a regular file" };
  let real: string;
  try {
    real = realpathSync(path);
    const root = realpathSync(dir);
    if (real !== root && !real.startsWith(root + sep)) return { refused: "resolves outside the card's directory" };
  } catch (err) {
    return { refused: `cannot read: ${(err as Error).message}` };
  }
  let fd: number;
  try {
    fd = openSync(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    return { refused: `cannot open: ${(err as Error).message}` };
  }
  const opened = fstatSync(fd);
  if (!opened.isFile()) {
    closeSync(fd);
    return { refused: "not a regular file" };
  }
  if (opened.size > maxBytes) {
    closeSync(fd);
    return { refused: `larger than ${maxBytes} bytes` };
  }
  const hash = createHash("sha256");
  // Reads what the file held when opened, never more than the bound.
  const stream = createReadStream("", { fd, start: 0, end: Math.max(0, opened.size - 1), autoClose: true });
  if (opened.size > 0) for await (const chunk of stream) hash.update(chunk as Buffer);
  else stream.destroy();
  return { sha256: hash.digest("hex") };
}
