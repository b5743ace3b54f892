// The results files a run card seals: every results file below the run's directory (files.ts, what
// `score` reads, in the same order), each with its sha256, plus the count of records whose last
// result line has an errored question (docs/run-card.md scores.errors) and how many questions each
// engine method answered in those last lines (`answered_by`, docs/run-card.md method.answered_by).
// A line that is not JSON before the end of a file is a FormatError naming file and line.
//
// A ResultsSealer reads the files as they grow (catchUp), so a run that is sealed the moment it
// completes reads only what was written since its last catch-up (issue 26: the exit follows the
// last commit; reading a whole suite's results at the end took seconds). sealResults reads them
// all at once, with the same rules.
import { type Hash, createHash } from "node:crypto";
import { closeSync, fstatSync, openSync, readFileSync, readSync, statSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { FormatError } from "../errors.js";
import { relativeKey, resultFiles } from "./files.js";
import { scanResultRow, type RowFacts } from "./row-scan.js";

export interface ResultsSeal {
  /** Path relative to the run directory (with `/`) -> sha256 of the file's bytes. */
  files: Record<string, string>;
  errorRecords: number;
  /** Engine method -> questions it answered, over each record's last line (its `answered_by`). */
  answeredBy: Record<string, number>;
}

/** Hashes and reads the results files below `dir`; `only` limits it to these relative paths. */
export function sealResults(dir: string, only?: ReadonlySet<string>): ResultsSeal {
  return new ResultsSealer(dir).seal(only);
}

/** What a record's last line so far says: errored or not, and its engine methods' question counts. */
interface RecordState {
  errored: boolean;
  answered: Record<string, number> | undefined;
}

/** One results file read up to `offset`: its hash so far, its records, the text after its last newline. */
interface FileState {
  path: string;
  hash: Hash;
  offset: number;
  /** Lines read whole (their newline seen). */
  lines: number;
  /** Bytes after the last newline: a line still being written, or a torn last line. */
  rest: Buffer;
  records: Map<string, RecordState>;
  /** The first line that is not JSON, once a newline follows it: the file is corrupted. */
  corrupt: FormatError | undefined;
  /** Identity of what was read: a file replaced, shrunk or (gzip) rewritten is read again. */
  ino: number;
  mtimeMs: number;
  gzip: boolean;
}

/** Bytes read and hashed at a time. */
const CHUNK_BYTES = 1 << 20;

export class ResultsSealer {
  private readonly files = new Map<string, FileState>();
  /** The distinct record states read so far (stateOf). */
  private readonly states: States = new Map();
  /** The results files of the last catch-up, in path order (seal() catches up first). */
  private listed!: readonly string[];
  /** Bytes read from the results files so far, a file read again counted again. */
  bytesRead = 0;

  constructor(readonly dir: string) {}

  /**
   * Reads what the results files gained since the last call, up to `budget` bytes (whole gzip files
   * are read at once, and again when they change). Returns true when every file is read to its end.
   */
  catchUp(budget = Infinity): boolean {
    const paths = resultFiles(this.dir);
    this.listed = paths;
    let left = budget;
    for (const path of paths) {
      if (left <= 0) return false;
      left -= this.readFile(path, left);
    }
    return left > 0;
  }

  /**
   * Catches up every `intervalMs`, `chunkBytes` at a time with `pauseMs` between chunks (the
   * thread serves a page and /metrics, and a resumed run's files, read at its start, would take a
   * core from the coordinator reading the suite), until the returned stop() is called. A file that
   * cannot be read is left to seal() to report.
   */
  follow(intervalMs = 1_000, chunkBytes = 1 << 20, pauseMs = 20): () => void {
    let timer: NodeJS.Timeout;
    const turn = (): void => {
      // A catch-up that fails (seal() reads the file again and says what it finds) is tried again an interval later.
      let done = true;
      try {
        done = this.catchUp(chunkBytes);
      } catch {
        // left to seal()
      }
      timer = setTimeout(turn, done ? intervalMs : pauseMs).unref();
    };
    timer = setTimeout(turn, intervalMs).unref();
    return () => clearTimeout(timer);
  }

  /** Catches up with every file, then seals those in `only` (relative paths), or all. */
  seal(only?: ReadonlySet<string>): ResultsSeal {
    this.catchUp();
    const files: Record<string, string> = {};
    const last = new Map<string, RecordState>();
    for (const path of this.listed) {
      const key = relativeKey(this.dir, path);
      if (only && !only.has(key)) continue;
      const f = this.files.get(path)!;
      if (f.corrupt) throw f.corrupt;
      files[key] = f.hash.copy().digest("hex");
      for (const [runId, state] of f.records) last.set(runId, state);
      // The text after the last newline is the file's last line: counted when it is a whole record
      // (a file need not end with a newline); only it may be torn by a crash, and then it holds no
      // committed result (`score` warns about it).
      const tail = lastLine(f, this.states);
      if (tail) last.set(tail.runId, tail.state);
    }
    let errorRecords = 0;
    const answeredBy: Record<string, number> = {};
    for (const { errored, answered } of last.values()) {
      if (errored) errorRecords++;
      for (const [method, n] of Object.entries(answered ?? {})) answeredBy[method] = (answeredBy[method] ?? 0) + n;
    }
    // Strings sort by UTF-16 code units, what `<` compares: no comparator needed.
    return { files, errorRecords, answeredBy: Object.fromEntries(Object.keys(answeredBy).sort().map((m) => [m, answeredBy[m]!])) };
  }

  /** Reads the new bytes of one file (at most `budget`); returns how many it read. */
  private readFile(path: string, budget: number): number {
    const gzip = path.endsWith(".gz");
    const st = statSync(path);
    let f = this.files.get(path);
    // A file is only ever appended to while a run writes it; one that shrank, was replaced or (gzip,
    // never appended to) changed at all is read again from its start.
    if (f && (f.ino !== st.ino || st.size < f.offset || (gzip && (st.mtimeMs !== f.mtimeMs || st.size !== f.offset)))) f = undefined;
    if (!f) {
      f = { path, hash: createHash("sha256"), offset: 0, lines: 0, rest: Buffer.alloc(0), records: new Map(), corrupt: undefined, ino: st.ino, mtimeMs: st.mtimeMs, gzip };
      this.files.set(path, f);
    }
    if (gzip) {
      // Kept past the check above, a gzip file that was read is unchanged since.
      if (f.offset > 0) return 0;
      const bytes = readFileSync(path);
      const text = gunzipSync(bytes); // before anything is kept: a file that fails is read again, and fails again
      f.hash.update(bytes);
      f.offset = bytes.length;
      f.mtimeMs = st.mtimeMs;
      this.readLines(f, text);
      this.bytesRead += bytes.length;
      return bytes.length;
    }
    const fd = openSync(path, "r");
    try {
      const end = Math.min(fstatSync(fd).size, f.offset + budget);
      let read = 0;
      // Stryker disable next-line EqualityOperator: a read at the end gives 0 bytes, which ends the loop too
      while (f.offset < end) {
        const bytes = Buffer.allocUnsafe(Math.min(end - f.offset, CHUNK_BYTES));
        const n = readSync(fd, bytes, 0, bytes.length, f.offset);
        // Stryker disable next-line ConditionalExpression: only a writer other than the run's shrinks a file between the fstat above and this read
        if (n === 0) break;
        const chunk = bytes.subarray(0, n);
        f.hash.update(chunk);
        f.offset += n;
        read += n;
        this.readLines(f, chunk);
      }
      this.bytesRead += read;
      f.mtimeMs = st.mtimeMs;
      return read;
    } finally {
      closeSync(fd);
    }
  }

  /** Takes the whole lines of `bytes` (after the file's rest); what follows the last newline stays. */
  private readLines(f: FileState, bytes: Buffer): void {
    // Stryker disable next-line ConditionalExpression,EqualityOperator: the same bytes either way (a concat with nothing is a copy)
    const text = f.rest.length > 0 ? Buffer.concat([f.rest, bytes]) : bytes;
    let start = 0;
    for (let nl = text.indexOf(0x0a); nl >= 0; nl = text.indexOf(0x0a, start)) {
      f.lines++;
      if (!f.corrupt) this.readLine(f, text, start, nl);
      start = nl + 1;
    }
    f.rest = Buffer.from(text.subarray(start));
  }

  /** The line in bytes[start, end): scanned where the scan can decide it (row-scan.ts), else parsed as text. */
  private readLine(f: FileState, bytes: Buffer, start: number, end: number): void {
    const facts = scanResultRow(bytes, start, end);
    // Stryker disable next-line ConditionalExpression: parsing every line as text gives the same answers (test/common/results/row-scan.test.ts holds the scan to them); the scan only saves the parse
    if (facts === undefined) this.readLineText(f, bytes.toString("utf8", start, end));
    else if (facts !== null) f.records.set(facts.runId, stateOf(facts, this.states));
  }

  private readLineText(f: FileState, line: string): void {
    if (!line.trim()) return; // blank lines are no records (`score` skips them too)
    // Every line is parsed: a line corrupted mid-file (a torn write with more lines after it) can
    // start with its run_id and end in "}", and no cheaper reading tells it from a whole one.
    const row = parseRow(line);
    if (row === undefined) {
      // A line followed by a newline is not the last: the file is corrupted, and `score` refuses it too.
      f.corrupt = new FormatError(f.path, f.lines, undefined, "not valid JSON (a corrupted line before the end of the file)");
      return;
    }
    const record = recordOf(row, this.states);
    if (record) f.records.set(record.runId, record.state);
  }
}

/** The file's text after its last newline, as a record, when it is one. */
function lastLine(f: FileState, states: States): { runId: string; state: RecordState } | undefined {
  // Nothing or blanks after the last newline are no JSON, so no record.
  return recordOf(parseRow(f.rest.toString("utf8")), states);
}

type Row = { run_id?: unknown; errors?: unknown; answered_by?: unknown };

function parseRow(line: string): Row | null | undefined {
  let row: Row | null | undefined;
  try {
    row = JSON.parse(line) as Row | null;
  } catch {
    // not JSON: no row
  }
  return row;
}

function recordOf(row: Row | null | undefined, states: States): { runId: string; state: RecordState } | undefined {
  // No record: null, or no run_id (a number, string or array has none either).
  if (typeof row?.run_id !== "string") return undefined;
  const errors = row.errors;
  return {
    runId: row.run_id,
    state: stateOf(
      {
        errored: errors !== null && typeof errors === "object" && Object.keys(errors).length > 0,
        methods: isStringRecord(row.answered_by) ? Object.values(row.answered_by) : undefined,
      },
      states,
    ),
  };
}

/**
 * One object for each distinct state (they are only read): a run's records share a few dozen. An
 * object and its counts per record outlived the young generation of the thread that seals: with
 * them, the main thread's grew from 16 MB to 32 MB over a full-suite run (bench/coordinator-bench,
 * a heap-statistics hook).
 */
type States = Map<string, RecordState>;

function stateOf(facts: Pick<RowFacts, "errored" | "methods">, states: States): RecordState {
  const answered = facts.methods ? countMethods(facts.methods) : undefined;
  // Stryker disable next-line StringLiteral: any three different texts keep errored, not errored and no answered_by apart
  const key = (facts.errored ? "e" : "-") + (answered ? JSON.stringify(answered) : "");
  let state = states.get(key);
  // Stryker disable next-line ConditionalExpression,BlockStatement,LogicalOperator: a cache (a new object each time holds the same state), and freezing is a guard (Object.freeze(undefined) is undefined)
  if (!state) states.set(key, (state = Object.freeze({ errored: facts.errored, answered: answered && Object.freeze(answered) })));
  return state;
}

function countMethods(methods: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const method of methods) counts[method] = (counts[method] ?? 0) + 1;
  return counts;
}

function isStringRecord(v: unknown): v is Record<string, string> {
  return v !== null && typeof v === "object" && !Array.isArray(v) && Object.values(v).every((x) => typeof x === "string");
}
