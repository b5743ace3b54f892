// Checks of an output path at start, so that a read-only, missing or wrong-kind --out is reported
// as what it is (exit 2), before any work, instead of as the first failing write deep inside.
import { mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { UsageError } from "../common/errors.js";

const WHY: Record<string, string> = {
  EROFS: "read-only filesystem",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  ENOSPC: "no space left on the device",
  ENOENT: "a parent directory cannot be created (read-only or missing)",
  ENOTDIR: "a parent is a file, not a directory",
  EEXIST: "a file is in the way",
};

function why(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code ?? "";
  return `${WHY[code] ?? (err as Error).message}${code ? ` (${code})` : ""}`;
}

/**
 * mkdir -p one level at a time: Node's recursive mkdir loops forever where a parent exists but
 * refuses new entries with ENOENT (procfs, some read-only mounts), which is how a bad --out hung.
 */
function makeDirs(dir: string): void {
  const missing: string[] = [];
  for (let d = dir; !statSync(d, { throwIfNoEntry: false }); d = dirname(d)) {
    missing.unshift(d);
    if (dirname(d) === d) break;
  }
  for (const d of missing) mkdirSync(d);
}

/** `dir` exists (made if need be), is a directory, and this process can create files in it. */
export function ensureWritableDir(flag: string, dir: string): void {
  const kind = statSync(dir, { throwIfNoEntry: false });
  if (kind && !kind.isDirectory()) throw new UsageError(`--${flag} ${dir} is a file, not a directory`);
  if (!kind) {
    try {
      makeDirs(resolve(dir));
    } catch (err) {
      throw new UsageError(`--${flag} ${dir}: cannot create the directory: ${why(err)}`, { cause: err });
    }
  }
  // Root passes access() checks on any mode; only a real write tells (read-only mounts, full disks).
  const probe = join(dir, `.udm-write-probe-${process.pid}`);
  try {
    writeFileSync(probe, "");
  } catch (err) {
    throw new UsageError(`--${flag} ${dir} is not writable: ${why(err)}`, { cause: err });
  } finally {
    rmSync(probe, { force: true });
  }
}

/** `file` can be written whole: it is not a directory and its directory is writable. */
export function ensureWritableFile(flag: string, file: string): void {
  if (statSync(file, { throwIfNoEntry: false })?.isDirectory()) {
    throw new UsageError(`--${flag} ${file} is a directory; give a file path such as ${join(file, "metrics.json")}`);
  }
  ensureWritableDir(flag, dirname(resolve(file)));
}
