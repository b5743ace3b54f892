// The payloads (state and questions JSON) of every record in scope, spilled to one file on disk at
// start so the coordinator keeps only offsets in memory: the full suite is several hundred MB of
// text, and a WorkUnit reads back just its own records.
import { closeSync, mkdirSync, openSync, readdirSync, readSync, rmdirSync, rmSync, writeSync } from "node:fs";
import { dirname } from "node:path";

export interface SpillSlot {
  offset: number;
  stateBytes: number;
  questionsBytes: number;
}

const FLUSH_BYTES = 4 << 20;

export class PayloadSpill {
  private fd: number;
  private size = 0;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private closed = false;

  constructor(readonly path: string) {
    mkdirSync(dirname(path), { recursive: true });
    this.fd = openSync(path, "w+");
  }

  /** Appends one record's payload and returns where it lies. */
  add(stateJson: string, questionsJson: string): SpillSlot {
    const state = Buffer.from(stateJson, "utf8");
    const questions = Buffer.from(questionsJson, "utf8");
    const slot = { offset: this.size + this.pendingBytes, stateBytes: state.length, questionsBytes: questions.length };
    this.pending.push(state, questions);
    this.pendingBytes += state.length + questions.length;
    if (this.pendingBytes >= FLUSH_BYTES) this.flush();
    return slot;
  }

  read(slot: SpillSlot): { stateJson: string; questionsJson: string } {
    this.flush();
    const buf = Buffer.allocUnsafe(slot.stateBytes + slot.questionsBytes);
    let got = 0;
    while (got < buf.length) {
      const n = readSync(this.fd, buf, got, buf.length - got, slot.offset + got);
      if (n === 0) throw new Error(`payload spill ${this.path} is shorter than expected (offset ${slot.offset})`);
      got += n;
    }
    return {
      stateJson: buf.toString("utf8", 0, slot.stateBytes),
      questionsJson: buf.toString("utf8", slot.stateBytes),
    };
  }

  /**
   * Reads a payload's bytes as stored (UTF-8) into `target`: its state at `stateAt`, its questions at
   * `questionsAt`. The WorkUnit encoder passes them through without decoding them to strings.
   */
  readInto(slot: SpillSlot, target: Buffer, stateAt: number, questionsAt: number): void {
    this.flush();
    this.readFully(slot.offset, target, stateAt, slot.stateBytes);
    this.readFully(slot.offset + slot.stateBytes, target, questionsAt, slot.questionsBytes);
  }

  /** `length` stored bytes from `offset` (the payloads of several records stored one after another). */
  readRange(offset: number, length: number): Buffer {
    this.flush();
    const buf = Buffer.allocUnsafe(length);
    this.readFully(offset, buf, 0, length);
    return buf;
  }

  private readFully(position: number, target: Buffer, at: number, length: number): void {
    let got = 0;
    while (got < length) {
      const n = readSync(this.fd, target, at + got, length - got, position + got);
      if (n === 0) throw new Error(`payload spill ${this.path} is shorter than expected (offset ${position})`);
      got += n;
    }
  }

  /** Bytes written so far. */
  get bytes(): number {
    return this.size + this.pendingBytes;
  }

  private flush(): void {
    if (this.pendingBytes === 0) return;
    const all = Buffer.concat(this.pending, this.pendingBytes);
    let done = 0;
    while (done < all.length) done += writeSync(this.fd, all, done, all.length - done, this.size + done);
    this.size += all.length;
    this.pending = [];
    this.pendingBytes = 0;
  }

  /** Closes and deletes the file. */
  dispose(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
    rmSync(this.path, { force: true });
    try {
      if (readdirSync(dirname(this.path)).length === 0) rmdirSync(dirname(this.path));
    } catch {
      // Another coordinator's spill is still there, or the folder is gone already.
    }
  }
}
