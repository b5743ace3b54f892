// A suite on disk (docs/suite-format.md): track files, manifest, identity, and validated record streams.
import { createHash } from "node:crypto";
import { createReadStream, existsSync, lstatSync, readdirSync, realpathSync, statSync } from "node:fs";
import { createGunzip } from "node:zlib";
import { isAbsolute, join, relative, sep } from "node:path";
import { FormatError, UsageError } from "../errors.js";
import { readJsonLines, type ReadOptions } from "../jsonl-reader.js";
import { firstIssue, readJsonFileOrThrow } from "../parse.js";
import { ManifestSchema, RecordSchema, wellFormedRecord, type Manifest, type SuiteRecord } from "./schema.js";
import { decodeAllButTexts, type TextsAsBytes } from "./record-texts.js";

export interface TrackFile {
  track: string;
  family: string;
  /** Absolute path. */
  path: string;
  /** Path relative to the suite root, with `/`, as the manifest keys it: `test/<family>/<track>.jsonl.gz`. */
  relPath: string;
}

export interface Suite {
  root: string;
  manifest: Manifest | undefined;
  files: TrackFile[];
  /** Entries under test/ left out of `files` because a symlink leads outside the suite (suite-check.ts reports them). */
  layoutProblems: string[];
}

export interface TrackFilter {
  tracks?: readonly string[];
  families?: readonly string[];
}

/** Opens `<suite>` or `<suite>/test`. Throws UsageError when neither holds track files. */
export function openSuite(dir: string): Suite {
  if (!existsSync(dir)) throw new UsageError(`suite directory not found: ${dir}`);
  let root = dir;
  if (!existsSync(join(dir, "test")) && existsSync(join(dir, "..", "test")) && dir.replace(/[/\\]+$/, "").endsWith("test")) {
    root = join(dir, "..");
  }
  const testDir = join(root, "test");
  if (!existsSync(testDir) || !statSync(testDir).isDirectory()) {
    throw new UsageError(`not a suite: ${dir} has no test/ directory of track files`);
  }
  const files: TrackFile[] = [];
  const layoutProblems: string[] = [];
  const rootReal = realpathSync(root);
  /** A symlink is followed only when it stays inside the suite. */
  const staysInside = (path: string): boolean => {
    if (!lstatSync(path).isSymbolicLink()) return true;
    let target: string;
    try {
      target = realpathSync(path);
    } catch {
      layoutProblems.push(`${relative(root, path).split(sep).join("/")}: dangling symlink`);
      return false;
    }
    const rel = relative(rootReal, target);
    if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) {
      layoutProblems.push(`${relative(root, path).split(sep).join("/")}: symlink to ${target}, outside the suite`);
      return false;
    }
    return true;
  };
  if (!staysInside(testDir)) throw new UsageError(`not a suite: ${layoutProblems.join("; ")}`);
  for (const family of readdirSync(testDir).sort()) {
    const famDir = join(testDir, family);
    if (!staysInside(famDir) || !statSync(famDir).isDirectory()) continue;
    for (const name of readdirSync(famDir).sort()) {
      if (!name.endsWith(".jsonl.gz")) continue;
      const path = join(famDir, name);
      if (!staysInside(path)) continue;
      files.push({ track: name.slice(0, -".jsonl.gz".length), family, path, relPath: relative(root, path).split(sep).join("/") });
    }
  }
  if (files.length === 0) {
    throw new UsageError(`not a suite: no test/<family>/<track>.jsonl.gz under ${root}${layoutProblems.length ? ` (${layoutProblems.join("; ")})` : ""}`);
  }
  const manifestPath = join(root, "manifest.json");
  let manifest: Manifest | undefined;
  if (existsSync(manifestPath)) {
    manifest = readJsonFileOrThrow(manifestPath, ManifestSchema);
  }
  return { root, manifest, files, layoutProblems };
}

/** Track files selected by --tracks / --families; unknown names are a usage error. */
export function selectFiles(suite: Suite, filter: TrackFilter = {}): TrackFile[] {
  const { tracks, families } = filter;
  const known = new Set(suite.files.map((f) => f.track));
  const knownFam = new Set(suite.files.map((f) => f.family));
  for (const t of tracks ?? []) if (!known.has(t)) throw new UsageError(`unknown track ${JSON.stringify(t)} (not in ${suite.root})`);
  for (const f of families ?? []) if (!knownFam.has(f)) throw new UsageError(`unknown family ${JSON.stringify(f)} (not in ${suite.root})`);
  return suite.files.filter(
    (f) => (!tracks?.length || tracks.includes(f.track)) && (!families?.length || families.includes(f.family)),
  );
}

/** Suite identity: sha256 over the sorted lines `<relative path>\t<sha256>\n` of every file. */
export function suiteIdentity(fileHashes: Readonly<Record<string, string>>): string {
  const lines = Object.entries(fileHashes)
    .map(([path, sha]) => `${path}\t${sha.toLowerCase()}\n`)
    .sort();
  return createHash("sha256").update(lines.join("")).digest("hex");
}

export interface ReadRecordsOptions {
  /** Receives the sha256 of the decompressed bytes once the file has been read whole. */
  onHash?: (sha256: string) => void;
  /**
   * When given, a line that is not valid JSON, does not match the schema, repeats an id or has a
   * wrong run_id is reported here (one error per problem) and skipped; reading goes on.
   * A torn last line is reported too. Without it the first problem throws.
   */
  onProblem?: (error: FormatError) => void;
  /** Attach each line's bytes to its record (`raw`), for a caller that passes parts of it on as they are. */
  raw?: boolean;
  /**
   * A record's texts may be left as byte strings (record-texts.ts), which the record then says with
   * `textsAsBytes`; for a caller that checks records and passes their texts on as bytes.
   */
  textsAsBytes?: boolean;
}

/** Most schema issues reported for one line; the rest are usually consequences of the first. */
const MAX_ISSUES_PER_LINE = 5;

/**
 * Validated records of one track file. A line that does not match the schema throws a FormatError
 * naming file, line and field; so does a run_id that is not `<track>:<id>`.
 */
export async function* readTrackRecords(file: TrackFile, options: ReadRecordsOptions = {}): AsyncGenerator<SuiteRecord & TextsAsBytes & { line: number; raw?: Buffer }> {
  const hash = options.onHash ? createHash("sha256") : undefined;
  const report = options.onProblem;
  const ids = new Set<string>();
  const readOptions: ReadOptions = options.raw || options.textsAsBytes ? { raw: true } : {};
  if (options.textsAsBytes) readOptions.byteStrings = true;
  if (hash) readOptions.onBytes = (b) => hash.update(b);
  if (report) {
    readOptions.onBadLine = report;
    readOptions.onTornLastLine = (line) => report(new FormatError(file.path, line, undefined, "torn last line: no newline and not valid JSON (file cut off?)"));
  }
  for await (const { line, value, raw, byteStrings } of readJsonLines(file.path, readOptions)) {
    const fast = wellFormedRecord(byteStrings ? decodeAllButTexts(value) : value);
    // The schema decides (and names the field) on the exact value.
    const parsed = fast ? { success: true as const, data: fast } : RecordSchema.safeParse(byteStrings ? JSON.parse(raw!.toString("utf8")) : value);
    if (!parsed.success) {
      if (!report) {
        const { field, message } = firstIssue(parsed.error);
        throw new FormatError(file.path, line, field || undefined, message);
      }
      for (const issue of parsed.error.issues.slice(0, MAX_ISSUES_PER_LINE)) {
        report(new FormatError(file.path, line, issue.path.map(String).join(".") || undefined, issue.message));
      }
      continue;
    }
    const rec = parsed.data;
    const problem = ids.has(rec.id)
      ? new FormatError(file.path, line, "id", `duplicate id ${JSON.stringify(rec.id)} in track`)
      : rec._evaluation.run_id !== `${file.track}:${rec.id}`
        ? new FormatError(file.path, line, "_evaluation.run_id", `${JSON.stringify(rec._evaluation.run_id)} is not "<track>:<id>" (${JSON.stringify(`${file.track}:${rec.id}`)})`)
        : undefined;
    if (problem) {
      if (!report) throw problem;
      report(problem);
      continue;
    }
    ids.add(rec.id);
    if (fast && byteStrings) Object.assign(rec, { textsAsBytes: true });
    yield options.raw ? Object.assign(rec, { line, raw }) : Object.assign(rec, { line });
  }
  if (hash && options.onHash) options.onHash(hash.digest("hex"));
}

/** sha256 of the decompressed bytes of a file, streaming. */
export async function decompressedSha256(path: string): Promise<string> {
  const hash = createHash("sha256");
  const raw = createReadStream(path);
  for await (const chunk of (path.endsWith(".gz") ? raw.pipe(createGunzip()) : raw) as AsyncIterable<Buffer>) hash.update(chunk);
  return hash.digest("hex");
}

/** Compares a computed hash with the manifest; returns a problem string or undefined. */
export function manifestHashProblem(suite: Suite, file: TrackFile, sha256: string): string | undefined {
  const entry = suite.manifest?.files[file.relPath];
  if (!suite.manifest) return undefined;
  if (!entry) return `${file.relPath}: not listed in manifest.json`;
  if (entry.sha256.toLowerCase() !== sha256) {
    return `${file.relPath}: sha256 mismatch (manifest ${entry.sha256}, file ${sha256})`;
  }
  return undefined;
}
