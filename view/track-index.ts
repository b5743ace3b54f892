// The index `view` keeps of one track, built the first time the track is opened: per record (in
// file order) its id, suite line, headline gold and predicted label and a status, and where its
// latest result line is (byte offset and length in `<family>/<track>.jsonl`). Built in one
// streaming pass over the suite file and one over the results file, read in fixed-size chunks: the
// index holds a few numbers per record, never a line. Pages of records are answered from the index
// alone; a record's page reads its one result line at its offset, and its suite line.
import { open } from "node:fs/promises";
import { readJsonLines } from "../common/jsonl-reader.js";
import { limitRecords, readCheckedTrack, type Suite, type TrackFile } from "../common/suite/index.js";

/** Status bits of a record's headline question. */
export const STATUS = { right: 1, wrong: 2, skipped: 4, errored: 8, missing: 16 } as const;
export type StatusName = keyof typeof STATUS;

/** Bytes read from a results file at a time while indexing. */
export const INDEX_CHUNK_BYTES = 1 << 16;

/** What the server has read of results files: the index pass, and the pages served since. */
export interface ReadStats {
  /** Bytes of results files scanned to build indexes. */
  indexBytes: number;
  /** Largest buffer the index pass held at once (a chunk plus an unfinished line). */
  maxIndexBuffer: number;
  /** Bytes of results lines read to answer record pages. */
  pageBytes: number;
  /** Result lines read to answer record pages. */
  pageLines: number;
}

export type HeadlineKind = "choice" | "noul" | "retrieval" | "routing" | "none";

export class TrackIndex {
  readonly ids: string[] = [];
  private readonly byId = new Map<string, number>();
  /** Suite line of each record. */
  suiteLines = new Uint32Array(0);
  /** Index into `labels` of each record's headline gold; -1 none. */
  gold = new Int32Array(0);
  /** Index into `labels` of each record's predicted headline label; -1 none. */
  pred = new Int32Array(0);
  status = new Uint8Array(0);
  /** Which results file (of `files`) holds the record's latest line; -1: none. */
  fileOf = new Int8Array(0);
  /** Byte offset of that line (a plain file) or its line number (a gzip file). */
  position = new Float64Array(0);
  length = new Uint32Array(0);
  readonly labels: string[] = [];
  private readonly labelIds = new Map<string, number>();
  headlineKey: string | undefined;
  kind: HeadlineKind = "none";
  /** Routing tracks: the routes accepted for each record (its headline is right when the predicted route is one). */
  private accepted: Array<ReadonlySet<string> | undefined> = [];

  private constructor(
    readonly file: TrackFile,
    readonly files: readonly string[],
  ) {}

  static async build(suite: Suite, file: TrackFile, resultFiles: readonly string[], limit: number | undefined, stats: ReadStats): Promise<TrackIndex> {
    const index = new TrackIndex(file, resultFiles);
    await index.readSuite(suite, limit);
    for (const [i, path] of resultFiles.entries()) await index.readResults(path, i, stats);
    return index;
  }

  get size(): number {
    return this.ids.length;
  }

  indexOf(id: string): number | undefined {
    return this.byId.get(id);
  }

  label(i: number): string | null {
    return i < 0 ? null : this.labels[i]!;
  }

  statusNames(i: number): StatusName[] {
    const s = this.status[i]!;
    return (Object.keys(STATUS) as StatusName[]).filter((k) => (s & STATUS[k]) !== 0);
  }

  private labelId(label: string): number {
    let id = this.labelIds.get(label);
    if (id === undefined) {
      id = this.labels.length;
      this.labels.push(label);
      this.labelIds.set(label, id);
    }
    return id;
  }

  private async readSuite(suite: Suite, limit: number | undefined): Promise<void> {
    const rows: Array<{ id: string; line: number; group: string; gold: string | null; accepted: ReadonlySet<string> | undefined }> = [];
    for await (const r of readCheckedTrack(suite, this.file)) {
      if (this.kind === "none") {
        if (r.scoring?.type === "retrieval_ranking") this.kind = "retrieval";
        else if (r.scoring?.type === "routing_outcome") {
          // The route question (docs/scoring.md "Routing outcome"): `route`, else the first choice question.
          this.kind = "routing";
          this.headlineKey = Object.hasOwn(r.questions, "route") ? "route" : Object.keys(r.questions).find((k) => r.questions[k]!.type === "choice");
          if (this.headlineKey !== undefined) for (const o of Object.keys(r.questions[this.headlineKey]!.criteria)) this.labelId(o);
        } else {
          // The headline question: the first key with gold in the first record with any (docs/scoring.md).
          const key = Object.keys(r.questions).find((k) => Object.hasOwn(r.expected, k));
          if (key !== undefined) {
            this.headlineKey = key;
            this.kind = r.questions[key]!.type;
            // Labels in the first record's option order, so the confusion matrix reads in criteria order.
            for (const o of this.kind === "noul" ? ["true", "false"] : Object.keys(r.questions[key]!.criteria)) this.labelId(o);
          }
        }
      }
      const g = this.headlineKey !== undefined && this.kind !== "retrieval" ? r.expected[this.headlineKey] : undefined;
      const accepted = r.scoring?.type === "routing_outcome" ? new Set((r.scoring as { accepted?: string[] }).accepted ?? []) : undefined;
      rows.push({ id: r.id, line: r.line, group: r.metadata.group_id, gold: g === undefined ? null : String(g), accepted });
    }
    const kept = limitRecords(rows, (r) => r.group, limit);
    const n = kept.length;
    this.suiteLines = new Uint32Array(n);
    this.gold = new Int32Array(n).fill(-1);
    this.pred = new Int32Array(n).fill(-1);
    this.status = new Uint8Array(n).fill(STATUS.missing | (this.kind === "retrieval" || this.kind === "none" ? 0 : STATUS.wrong));
    this.fileOf = new Int8Array(n).fill(-1);
    this.position = new Float64Array(n);
    this.length = new Uint32Array(n);
    kept.forEach((r, i) => {
      this.ids.push(r.id);
      this.byId.set(r.id, i);
      this.suiteLines[i] = r.line;
      if (r.gold !== null) this.gold[i] = this.labelId(r.gold);
      if (this.kind === "routing") this.accepted[i] = r.accepted;
      if (r.gold === null && !(this.kind === "routing" && r.accepted) && this.kind !== "retrieval") this.status[i] = STATUS.missing;
    });
  }

  /** One pass over a results file: a plain file in fixed-size chunks with byte offsets, a gzip file by line number. */
  private async readResults(path: string, fileIndex: number, stats: ReadStats): Promise<void> {
    const prefix = `${this.file.track}:`;
    const take = (text: string, position: number, length: number) => {
      let line: { run_id?: unknown; probs?: Record<string, Record<string, number>>; skipped?: string[]; errors?: Record<string, string> };
      try {
        line = JSON.parse(text) as typeof line;
      } catch {
        return; // a torn last line (a run still writing): not a result yet
      }
      if (typeof line.run_id !== "string" || !line.run_id.startsWith(prefix)) return;
      const i = this.byId.get(line.run_id.slice(prefix.length));
      if (i === undefined) return;
      this.fileOf[i] = fileIndex;
      this.position[i] = position;
      this.length[i] = length;
      this.classify(i, line);
    };
    if (path.endsWith(".gz")) {
      for await (const { line, value, bytes } of readJsonLines(path, { onTornLastLine: () => undefined })) {
        stats.indexBytes += bytes + 1;
        take(JSON.stringify(value), line, 0);
      }
      return;
    }
    const fh = await open(path, "r");
    try {
      const chunk = Buffer.allocUnsafe(INDEX_CHUNK_BYTES);
      let carry: Buffer = Buffer.alloc(0);
      let carryStart = 0;
      let pos = 0;
      for (;;) {
        const { bytesRead } = await fh.read(chunk, 0, chunk.length, pos);
        if (bytesRead === 0) break;
        stats.indexBytes += bytesRead;
        const data = carry.length > 0 ? Buffer.concat([carry, chunk.subarray(0, bytesRead)]) : chunk.subarray(0, bytesRead);
        stats.maxIndexBuffer = Math.max(stats.maxIndexBuffer, data.length);
        let start = 0;
        for (let nl = data.indexOf(0x0a, start); nl >= 0; nl = data.indexOf(0x0a, start)) {
          if (nl > start) take(data.toString("utf8", start, nl), carryStart + start, nl - start);
          start = nl + 1;
        }
        carryStart += start;
        carry = Buffer.from(data.subarray(start));
        pos += bytesRead;
      }
      if (carry.length > 0) take(carry.toString("utf8"), carryStart, carry.length);
    } finally {
      await fh.close();
    }
  }

  private classify(i: number, line: { probs?: Record<string, Record<string, number>>; skipped?: string[]; errors?: Record<string, string> }): void {
    let s = 0;
    const key = this.headlineKey;
    if ((line.skipped ?? []).length > 0) s |= STATUS.skipped;
    if (line.errors && Object.keys(line.errors).length > 0) s |= STATUS.errored;
    this.pred[i] = -1;
    if (this.kind === "choice" || this.kind === "noul" || this.kind === "routing") {
      const dist = key !== undefined && !(line.skipped ?? []).includes(key) && !(line.errors && Object.hasOwn(line.errors, key)) ? line.probs?.[key] : undefined;
      const label = dist ? predictedLabel(dist, this.kind === "noul" ? "noul" : "choice") : undefined;
      if (label === undefined) s |= STATUS.missing;
      else this.pred[i] = this.labelId(label);
      const accepted = this.accepted[i];
      // A routing record is right when its route is accepted (the headline, accepted_accuracy).
      if (accepted) s |= label !== undefined && accepted.has(label) ? STATUS.right : STATUS.wrong;
      else if (this.gold[i]! >= 0) s |= label !== undefined && this.labelId(label) === this.gold[i] ? STATUS.right : STATUS.wrong;
    }
    this.status[i] = s;
  }

  /** Reads the record's latest result line (its bytes only), or undefined when it has none. */
  async resultLine(i: number, stats: ReadStats): Promise<Record<string, unknown> | undefined> {
    const f = this.fileOf[i]!;
    if (f < 0) return undefined;
    const path = this.files[f]!;
    if (path.endsWith(".gz")) {
      for await (const { line, value, bytes } of readJsonLines(path, { onTornLastLine: () => undefined })) {
        if (line !== this.position[i]) continue;
        stats.pageBytes += bytes;
        stats.pageLines++;
        return value as Record<string, unknown>;
      }
      return undefined;
    }
    const fh = await open(path, "r");
    try {
      const buf = Buffer.allocUnsafe(this.length[i]!);
      const { bytesRead } = await fh.read(buf, 0, buf.length, this.position[i]!);
      stats.pageBytes += bytesRead;
      stats.pageLines++;
      return JSON.parse(buf.toString("utf8", 0, bytesRead)) as Record<string, unknown>;
    } finally {
      await fh.close();
    }
  }
}

/** The scorer's prediction rule (docs/scoring.md): argmax, ties to the first option; noul: p(true) ≥ 0.5. */
export function predictedLabel(dist: Record<string, number>, kind: "choice" | "noul"): string | undefined {
  if (kind === "noul") return typeof dist.true === "number" ? String(dist.true >= 0.5) : undefined;
  let best: string | undefined;
  let p = -Infinity;
  for (const [k, v] of Object.entries(dist)) {
    if (typeof v === "number" && v > p) {
      best = k;
      p = v;
    }
  }
  return best;
}
