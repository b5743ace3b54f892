// The payloads (state and questions JSON) of every record in scope, spilled to one file on disk at
// start so the coordinator keeps only offsets in memory: the full suite is several hundred MB of
// text, and a WorkUnit reads back just its own records. While the suite is read, full 4 MB blocks
// are written behind (libuv's threads), so reading does not wait on the disk; settled() waits for them.
import { close, closeSync, mkdirSync, openSync, readdirSync, readSync, rmdirSync, rmSync, unlinkSync, write, writeSync } from "node:fs";
import { dirname } from "node:path";

export interface SpillSlot {
  offset: number;
  stateBytes: number;
  questionsBytes: number;
}

const FLUSH_BYTES = 4 << 20;
/** Blocks written behind at once; beyond that a block is written before reading goes on. */
const MAX_IN_FLIGHT = 4;

export class PayloadSpill {
  private fd: number;
  private size = 0;
  /** Bytes not yet written, at the front of `pending`. */
  private pending = Buffer.allocUnsafe(FLUSH_BYTES);
  private pendingBytes = 0;
  private closed = false;
  private inFlight = 0;
  private failure: Error | undefined;
  private idle: Array<() => void> = [];
  /** Writes in the background: where each starts and ends. */
  private readonly writing = new Set<{ at: number; end: number }>();
  private readonly upTo: Array<{ end: number; resolve: () => void }> = [];
  /** Whether the file's name is gone already (it lives on until its descriptor is closed). */
  private unlinked = false;

  constructor(readonly path: string) {
    mkdirSync(dirname(path), { recursive: true });
    this.fd = openSync(path, "w+");
    // Nameless from the start: a coordinator killed mid-run leaves no spill behind, and the end of
    // the run does not wait for the kernel to free the file's pages (~0.1 s of the coordinator
    // thread for the full suite, in unlink).
    try {
      unlinkSync(path);
      this.unlinked = true;
    } catch {
      // A filesystem that cannot remove an open file: removed in dispose().
    }
  }

  /** Appends one record's payload and returns where it lies. */
  add(stateJson: string, questionsJson: string): SpillSlot {
    if (this.failure) throw this.failure;
    if (this.closed) throw new Error(`payload spill ${this.path} is disposed`);
    const state = Buffer.from(stateJson, "utf8");
    const questions = Buffer.from(questionsJson, "utf8");
    const size = state.length + questions.length;
    if (this.pendingBytes + size > this.pending.length) this.writeBehind();
    if (size > this.pending.length) {
      const offset = this.appendBlock(Buffer.concat([state, questions]));
      return { offset, stateBytes: state.length, questionsBytes: questions.length };
    }
    const slot = { offset: this.size + this.pendingBytes, stateBytes: state.length, questionsBytes: questions.length };
    this.pendingBytes += state.copy(this.pending, this.pendingBytes);
    this.pendingBytes += questions.copy(this.pending, this.pendingBytes);
    return slot;
  }

  /** Waits for the blocks written behind; throws the first write error. */
  async settled(): Promise<void> {
    while (this.inFlight > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
    if (this.failure) throw this.failure;
  }

  /**
   * Waits until every byte before `end` is written (a track's payloads, while later tracks are
   * still being spilled: settled() could wait for as long as reading goes on).
   */
  async writtenUpTo(end: number): Promise<void> {
    if (this.pendingBytes > 0 && this.size < end) this.flush();
    if ([...this.writing].some((w) => w.at < end)) await new Promise<void>((resolve) => this.upTo.push({ end, resolve }));
    if (this.failure) throw this.failure;
  }

  read(slot: SpillSlot): { stateJson: string; questionsJson: string } {
    if (this.inFlight > 0) throw new Error(`payload spill ${this.path} read before its writes settled`);
    if (this.failure) throw this.failure;
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

  /**
   * `length` stored bytes from `offset` (the payloads of several records stored one after another),
   * in a buffer this spill reuses: valid until its next read. Units are encoded one at a time, and a
   * fresh buffer per unit (hundreds of KB) only added to what the GC has to reclaim.
   */
  readRange(offset: number, length: number): Buffer {
    this.flush();
    if (this.rangeBuffer.length < length) this.rangeBuffer = Buffer.allocUnsafe(Math.max(length, this.rangeBuffer.length * 2));
    const buf = this.rangeBuffer.subarray(0, length);
    this.readFully(offset, buf, 0, length);
    return buf;
  }

  private rangeBuffer: Buffer = Buffer.allocUnsafe(0);

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

  /** Appends a block of payload bytes as it is (a reader's block) and returns the offset it starts at. */
  appendBlock(bytes: Uint8Array): number {
    if (this.failure) throw this.failure;
    // The suite may still be read when the run stops: a write to a closed descriptor could land in
    // a file opened meanwhile under the same number.
    if (this.closed) throw new Error(`payload spill ${this.path} is disposed`);
    this.writeBehind();
    const at = this.size;
    this.size += bytes.length;
    this.writeAt(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length), at);
    return at;
  }

  private flush(): void {
    if (this.pendingBytes === 0) return;
    const bytes = this.pendingBytes;
    this.pendingBytes = 0;
    writeAllAt(this.fd, this.pending.subarray(0, bytes), this.size);
    this.size += bytes;
  }

  /** Hands the pending block to a write in the background. */
  private writeBehind(): void {
    if (this.pendingBytes === 0) return;
    const block = this.pending.subarray(0, this.pendingBytes);
    const at = this.size;
    this.size += block.length;
    this.pending = Buffer.allocUnsafe(FLUSH_BYTES);
    this.pendingBytes = 0;
    this.writeAt(block, at);
  }

  /** Writes `block` at `at`: in the background, or now when enough writes are in flight already. */
  private writeAt(block: Buffer, at: number): void {
    if (this.inFlight >= MAX_IN_FLIGHT) return writeAllAt(this.fd, block, at);
    this.inFlight++;
    const range = { at, end: at + block.length };
    this.writing.add(range);
    const fd = this.fd;
    const writeFrom = (done: number): void =>
      write(fd, block, done, block.length - done, at + done, (err, n) => {
        if (!err && done + n < block.length) return writeFrom(done + n);
        if (err) this.failure ??= new Error(`cannot write payload spill ${this.path}: ${err.message}`, { cause: err });
        this.inFlight--;
        this.writing.delete(range);
        this.wakeUpTo();
        if (this.inFlight > 0) return;
        if (this.closed) close(fd, () => undefined);
        for (const resolve of this.idle.splice(0)) resolve();
      });
    writeFrom(0);
  }

  private wakeUpTo(): void {
    for (let i = this.upTo.length - 1; i >= 0; i--) {
      const w = this.upTo[i]!;
      if (this.failure || ![...this.writing].some((r) => r.at < w.end)) {
        this.upTo.splice(i, 1);
        w.resolve();
      }
    }
  }

  /** Closes and deletes the file. */
  dispose(): void {
    if (this.closed) return;
    this.closed = true;
    // A write still in flight closes the descriptor when it ends (closing it now could let the
    // write land in a file opened meanwhile).
    if (!this.unlinked) {
      if (this.inFlight === 0) closeSync(this.fd);
      rmSync(this.path, { force: true });
    }
    // Before the close below: an rmdir while that close freed the file's pages waited 0.13 s for it.
    try {
      if (readdirSync(dirname(this.path)).length === 0) rmdirSync(dirname(this.path));
    } catch {
      // Another coordinator's spill or lock is still there, or the folder is gone already.
    }
    // The last close of a nameless file frees its pages: done in libuv's pool.
    if (this.unlinked && this.inFlight === 0) close(this.fd, () => undefined);
  }
}

function writeAllAt(fd: number, bytes: Buffer, at: number): void {
  let done = 0;
  while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done, at + done);
}
