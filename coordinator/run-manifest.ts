// `<out>/run.json`: pins what a results directory belongs to (suite identity, tracks, method), so
// a resume against another suite or config is refused instead of mixing results.
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { UsageError } from "../common/errors.js";
import { readJsonFileOrThrow } from "../common/parse.js";
import type { Logger } from "../common/log.js";

export const RUN_MANIFEST_FORMAT = 1;

export const MethodConfigSchema = z.object({
  /** systemone | decisions | label-read */
  method: z.string(),
  /** Label-permutation seeds; empty = one read in natural order. */
  seeds: z.array(z.number().int()),
  temperature: z.number(),
  /** Model asked of the engine; "" = the engine's own. */
  model: z.string(),
});
export type MethodConfig = z.infer<typeof MethodConfigSchema>;

const RunManifestSchema = z.looseObject({
  format: z.number(),
  run_id: z.string(),
  suite_identity: z.string(),
  suite_root: z.string().optional(),
  tracks: z.array(z.string()),
  /** Records per track at most (`--limit`); null or absent: every record. */
  limit: z.number().int().positive().nullable().optional(),
  method: MethodConfigSchema,
  /** The run's name (`--run-name`), published in its bus status so a scorer can follow it; absent: none. */
  run_name: z.string().optional(),
  created_at: z.string(),
  updated_at: z.string(),
  sessions: z.number().int(),
  resumes: z.number().int(),
  forced: z.array(z.looseObject({ at: z.string(), changed: z.array(z.string()) })).default([]),
});
export type RunManifest = z.infer<typeof RunManifestSchema>;

export interface RunIdentity {
  suiteIdentity: string;
  suiteRoot: string;
  tracks: readonly string[];
  /** Records per track at most; null: every record. */
  limit: number | null;
  method: MethodConfig;
}

/**
 * Creates run.json or checks it against this session and counts the session. A different suite,
 * track selection or method is a UsageError unless `force`, which adopts the new values and keeps
 * the run_id.
 */
export function openRunManifest(outDir: string, id: RunIdentity, options: { force?: boolean; logger?: Logger; runName?: string } = {}): RunManifest {
  const path = join(outDir, "run.json");
  const now = new Date().toISOString();
  const tracks = [...id.tracks].sort();
  let manifest: RunManifest;
  if (!existsSync(path)) {
    manifest = {
      format: RUN_MANIFEST_FORMAT,
      run_id: randomUUID(),
      suite_identity: id.suiteIdentity,
      suite_root: id.suiteRoot,
      tracks,
      limit: id.limit,
      method: id.method,
      ...(options.runName !== undefined ? { run_name: options.runName } : {}),
      created_at: now,
      updated_at: now,
      sessions: 1,
      resumes: 0,
      forced: [],
    };
  } else {
    const old = readJsonFileOrThrow(path, RunManifestSchema);
    const changed: string[] = [];
    if (old.suite_identity !== id.suiteIdentity) changed.push(`suite identity ${old.suite_identity} -> ${id.suiteIdentity}`);
    if (JSON.stringify([...old.tracks].sort()) !== JSON.stringify(tracks)) changed.push(`tracks [${old.tracks.join(",")}] -> [${tracks.join(",")}]`);
    if ((old.limit ?? null) !== id.limit) changed.push(`limit ${old.limit ?? "none"} -> ${id.limit ?? "none"}`);
    if (canonical(old.method) !== canonical(id.method)) changed.push(`method ${canonical(old.method)} -> ${canonical(id.method)}`);
    if (changed.length > 0 && !options.force) {
      throw new UsageError(
        `${path}: this results directory belongs to another run configuration:\n${changed.map((c) => `  - ${c}`).join("\n")}\n` +
          `Use a new --out directory, or --force to resume here anyway.`,
      );
    }
    if (changed.length > 0) options.logger?.warn("run.json mismatch overridden by --force", { changed });
    // A name given to a resumed run replaces its old one (a scorer told the new name follows it); none given keeps it.
    if (options.runName !== undefined && old.run_name !== undefined && old.run_name !== options.runName) {
      options.logger?.info("run renamed", { run_id: old.run_id, from: old.run_name, to: options.runName });
    }
    manifest = {
      ...old,
      suite_identity: id.suiteIdentity,
      suite_root: id.suiteRoot,
      tracks,
      limit: id.limit,
      method: id.method,
      ...(options.runName !== undefined ? { run_name: options.runName } : {}),
      updated_at: now,
      sessions: old.sessions + 1,
      resumes: old.resumes + 1,
      forced: changed.length > 0 ? [...old.forced, { at: now, changed }] : old.forced,
    };
  }
  mkdirSync(outDir, { recursive: true });
  writeFileSync(`${path}.tmp`, JSON.stringify(manifest, null, 2) + "\n");
  renameSync(`${path}.tmp`, path);
  return manifest;
}

function canonical(m: MethodConfig): string {
  return JSON.stringify({ method: m.method, seeds: m.seeds, temperature: m.temperature, model: m.model });
}
