// Whole-file writes that a crash never leaves half done: write a sibling temp file, fsync, rename.
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { dirname } from "node:path";

export function writeFileAtomic(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  const fd = openSync(tmp, "w");
  try {
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (err) {
    // A full disk or a directory in the way: no half-written temp file stays behind.
    rmSync(tmp, { force: true });
    // writeSync's error names no file: name the one being written.
    const sys = err as NodeJS.ErrnoException;
    if (err instanceof Error && typeof sys.code === "string" && !sys.path) sys.path = path;
    throw err;
  }
}

export function writeJsonAtomic(path: string, value: unknown): void {
  writeFileAtomic(path, JSON.stringify(value, null, 2) + "\n");
}
