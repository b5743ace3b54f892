// `suite verify`: every line against the schema, counts and hashes against the manifest, the
// file list against the manifest, and the identity fields of every record. It goes on past
// problems so that one run lists all of them (file:line:field: problem). The checks themselves
// are suite-check.ts's, the same that score, run and the coordinator refuse a suite by.
import { FormatError } from "../errors.js";
import { openSuite, readTrackRecords, suiteIdentity, type Suite, type TrackFile } from "./suite.js";
import { layoutProblems, manifestProblems, RecordChecker } from "./suite-check.js";

export { MAX_RERANK_CHUNK } from "./suite-check.js";

export interface SuiteVerification {
  /** One line per problem, `<relative path>[:<line>][:<field>]: <problem>`; empty when clean. */
  problems: string[];
  files: number;
  records: number;
  /** Suite identity over the files as read (docs/suite-format.md). */
  identity: string;
  /** Whether a manifest.json was there to check counts and hashes against. */
  manifest: boolean;
}

interface FileCheck {
  rows: number;
  groups: number;
  sha256: string | undefined;
  /** The file could not be read to its end (corrupt gzip, unreadable). */
  unreadable: boolean;
}

export async function verifySuite(dir: string): Promise<SuiteVerification> {
  const suite = openSuite(dir);
  const problems: string[] = [];
  const hashes: Record<string, string> = {};
  let records = 0;
  for (const file of suite.files) {
    const check = await checkFile(file, problems);
    records += check.rows;
    if (check.sha256) hashes[file.relPath] = check.sha256;
    compareWithManifest(suite, file, check, problems);
  }
  problems.push(...layoutProblems(suite).filter((p) => !p.endsWith("extra file, not listed in manifest.json")));
  return { problems, files: suite.files.length, records, identity: suiteIdentity(hashes), manifest: suite.manifest !== undefined };
}

async function checkFile(file: TrackFile, problems: string[]): Promise<FileCheck> {
  const report = (line: number | undefined, field: string | undefined, problem: string) =>
    problems.push(`${file.relPath}${line !== undefined ? `:${line}` : ""}${field ? `:${field}` : ""}: ${problem}`);
  const badLines = new Set<number>();
  const groups = new Set<string>();
  const checker = new RecordChecker(file);
  let good = 0;
  let sha256: string | undefined;
  let unreadable = false;
  try {
    const reader = readTrackRecords(file, {
      onHash: (h) => (sha256 = h),
      onProblem: (e) => {
        if (e.line !== undefined) badLines.add(e.line);
        report(e.line, e.field, e.problem);
      },
    });
    for await (const rec of reader) {
      good++;
      groups.add(rec.metadata.group_id);
      checker.check(rec, (field, problem) => report(rec.line, field, problem));
    }
  } catch (err) {
    unreadable = true;
    report(err instanceof FormatError ? err.line : undefined, undefined, err instanceof FormatError ? err.problem : String(err));
  }
  return { rows: good + badLines.size, groups: groups.size, sha256, unreadable };
}

function compareWithManifest(suite: Suite, file: TrackFile, check: FileCheck, problems: string[]): void {
  if (!suite.manifest) return;
  // A file read in part: its counts and hash would only repeat the problem.
  if (check.unreadable && suite.manifest.files[file.relPath]) return;
  problems.push(...manifestProblems(suite, file, { rows: check.rows, groups: check.groups, sha256: check.sha256 ?? "" }));
}
