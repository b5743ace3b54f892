// One coordinator per results directory: two appending to the same track files would write
// duplicate lines. `<out>/.udm-cache/lock` holds the owner's pid and host; a lock whose process is
// gone (crash, container restart) is taken over, as are payload spills it left behind.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { UsageError } from "../common/errors.js";
import type { Logger } from "../common/log.js";

export interface OutDirLock {
  release(): void;
}

export function cacheDir(outDir: string): string {
  return join(outDir, ".udm-cache");
}

/** Out dirs locked by coordinators of this process (the pid check cannot tell them apart). */
const heldHere = new Set<string>();

export function lockOutDir(outDir: string, logger?: Logger): OutDirLock {
  const key = resolve(outDir);
  if (heldHere.has(key)) throw new UsageError(`${outDir} is in use by another coordinator in this process`);
  const dir = cacheDir(outDir);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, "lock");
  const me = { pid: process.pid, host: hostname(), since: new Date().toISOString() };
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, JSON.stringify(me) + "\n", { flag: "wx" });
      removeStaleSpills(dir, logger);
      heldHere.add(key);
      let released = false;
      return {
        release: () => {
          if (released) return;
          released = true;
          heldHere.delete(key);
          rmSync(path, { force: true });
          try {
            if (readdirSync(dir).length === 0) rmdirSync(dir);
          } catch {
            // Gone already.
          }
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const owner = readOwner(path);
      if (owner && owner.host === me.host && owner.pid !== process.pid && alive(owner.pid)) {
        throw new UsageError(`${outDir} is in use by another coordinator (pid ${owner.pid} since ${owner.since}); stop it or use another --out`);
      }
      if (owner && owner.host !== me.host) {
        logger?.warn("taking over a lock from another host; make sure no other coordinator writes this directory", { owner });
      } else logger?.warn("previous coordinator did not shut down cleanly; taking over its lock", { owner });
      rmSync(path, { force: true });
    }
  }
  throw new UsageError(`cannot lock ${outDir}`);
}

/**
 * The coordinator that holds `outDir`'s lock: one alive on this host, or one on another host (its
 * pid cannot be checked from here); undefined when unlocked or the owner is gone (killed).
 */
export function outDirHolder(outDir: string): { pid: number; host: string; since: string } | undefined {
  const owner = readOwner(join(cacheDir(outDir), "lock"));
  if (!owner) return undefined;
  return owner.host !== hostname() || alive(owner.pid) ? owner : undefined;
}

function readOwner(path: string): { pid: number; host: string; since: string } | undefined {
  try {
    const v = JSON.parse(readFileSync(path, "utf8")) as { pid?: unknown; host?: unknown; since?: unknown };
    return typeof v.pid === "number" && typeof v.host === "string" ? { pid: v.pid, host: v.host, since: String(v.since) } : undefined;
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Payload spills of coordinators that no longer run (we hold the lock, so none does). */
function removeStaleSpills(dir: string, logger?: Logger): void {
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir)) {
    if (!/^payloads-\d+\.bin$/.test(name)) continue;
    rmSync(join(dir, name), { force: true });
    logger?.info("removed a payload spill left by a stopped coordinator", { file: name });
  }
}
