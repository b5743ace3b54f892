// Encodes a WorkUnit (CoordinatorMessage.unit) by hand into protobuf bytes, its records' state and
// questions read from the payload spill straight into the message: they are stored as UTF-8 JSON
// and sent as is, never decoded to strings and encoded again (the generic encoder spent more time on
// that than on anything else per record). Field numbers are those of proto/udm/v1/orchestrator.proto;
// default values are left out, as protobufjs does. The Attach stream sends such bytes unchanged
// (grpc-service.ts).
import type { PayloadSpill } from "../payload-spill.js";
import type { PlannedUnit } from "../planner.js";
import type { RecordEntry } from "../suite-index.js";
import { UnitBufferPool } from "./unit-buffer-pool.js";
import { rememberSentUnit } from "./sent-units.js";

/**
 * A CoordinatorMessage { unit } already in its wire form, in a buffer lent by the pool: the stream
 * that writes it calls written() once its write has called back, and the buffer is reused. The
 * buffer holds the gRPC message frame too (5 bytes before the message: uncompressed, length), so
 * gRPC sends it as it is (framed-send.ts) rather than copying it into a frame of its own.
 */
export class EncodedUnit {
  private returned = false;
  /** The protobuf message (the frame less its 5-byte prefix). */
  readonly bytes: Buffer;
  constructor(
    /** The gRPC frame: the prefix, then the message. */
    readonly framed: Buffer,
    private readonly pool: UnitBufferPool,
  ) {
    this.bytes = framed.subarray(FRAME_PREFIX);
  }

  written(): void {
    if (this.returned) return;
    this.returned = true;
    this.pool.give(this.bytes);
  }
}

const pool = new UnitBufferPool();

/** gRPC's length-prefixed message: a compressed flag (0) and the message's length, big-endian. */
export const FRAME_PREFIX = 5;

const LENGTH = 2;
const VARINT = 0;
const tag = (field: number, wireType: number) => (field << 3) | wireType;

function varintSize(n: number): number {
  let size = 1;
  while (n >= 128) {
    n = Math.floor(n / 128);
    size++;
  }
  return size;
}

/** Bytes of a length-delimited field (tag under 16: one byte) of `len` bytes; 0 when empty. */
const fieldSize = (len: number) => (len === 0 ? 0 : 1 + varintSize(len) + len);

class Writer {
  pos = 0;
  constructor(readonly buf: Buffer) {}

  varint(n: number): void {
    while (n >= 128) {
      this.buf[this.pos++] = (n % 128) | 128;
      n = Math.floor(n / 128);
    }
    this.buf[this.pos++] = n;
  }

  /** A string field of known UTF-8 length; nothing when empty. */
  string(field: number, s: string, len: number): void {
    if (len === 0) return;
    this.buf[this.pos++] = tag(field, LENGTH);
    this.varint(len);
    this.pos += this.buf.write(s, this.pos, len, "utf8");
  }

  /** A bytes field's tag and length; returns where its bytes go (the caller fills them). */
  reserve(field: number, len: number): number {
    if (len === 0) return this.pos;
    this.buf[this.pos++] = tag(field, LENGTH);
    this.varint(len);
    const at = this.pos;
    this.pos += len;
    return at;
  }
}

/** Fills in the payloads of records[from, to), stored contiguously in the spill. */
function copyRun(spill: PayloadSpill, records: readonly RecordEntry[], places: ReadonlyArray<{ stateAt: number; questionsAt: number }>, from: number, to: number, target: Buffer): void {
  if (to - from === 1) {
    spill.readInto(records[from]!, target, places[from]!.stateAt, places[from]!.questionsAt);
    return;
  }
  const first = records[from]!;
  const last = records[to - 1]!;
  const bytes = spill.readRange(first.offset, last.offset + last.stateBytes + last.questionsBytes - first.offset);
  for (let i = from; i < to; i++) {
    const r = records[i]!;
    const at = r.offset - first.offset;
    bytes.copy(target, places[i]!.stateAt, at, at + r.stateBytes);
    bytes.copy(target, places[i]!.questionsAt, at + r.stateBytes, at + r.stateBytes + r.questionsBytes);
  }
}

/** CoordinatorMessage { unit: WorkUnit } with the given records' payloads, as bytes. */
export function encodeWorkUnit(unit: PlannedUnit, records: readonly RecordEntry[], backup: boolean, leaseMs: number, spill: PayloadSpill): EncodedUnit {
  const unitIdLen = Buffer.byteLength(unit.unitId);
  const trackLen = Buffer.byteLength(unit.track);
  const groupId = unit.groupIds[0] ?? "";
  const groupIdLen = Buffer.byteLength(groupId);
  const groupIdLens = unit.groupIds.map((g) => Buffer.byteLength(g));
  const lens = new Array<{ runId: number; id: number; sha: number; size: number }>(records.length);
  let size = fieldSize(unitIdLen) + fieldSize(trackLen) + fieldSize(groupIdLen) + (leaseMs > 0 ? 1 + varintSize(leaseMs) : 0);
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!;
    const l = { runId: Buffer.byteLength(r.recordKey), id: Buffer.byteLength(r.id), sha: Buffer.byteLength(r.payloadSha256), size: 0 };
    l.size = fieldSize(l.runId) + fieldSize(l.id) + fieldSize(r.stateBytes) + fieldSize(r.questionsBytes) + fieldSize(l.sha);
    lens[i] = l;
    size += 1 + varintSize(l.size) + l.size;
  }
  for (const len of groupIdLens) size += 1 + varintSize(len) + len;
  if (backup) size += 2;

  const messageSize = 1 + varintSize(size) + size;
  const w = new Writer(pool.lend(FRAME_PREFIX + messageSize));
  // A failed read of the spill gives the buffer back before the error goes on.
  try {
    w.buf[w.pos++] = 0;
    w.buf.writeUInt32BE(messageSize, w.pos);
    w.pos += 4;
    w.buf[w.pos++] = tag(2, LENGTH);
    w.varint(size);
    w.string(1, unit.unitId, unitIdLen);
    w.string(2, unit.track, trackLen);
    w.string(3, groupId, groupIdLen);
    if (leaseMs > 0) {
      w.buf[w.pos++] = tag(4, VARINT);
      w.varint(leaseMs);
    }
    // Records stored one after another in the spill are read with one read, then copied into place.
    let runStart = 0;
    const places: Array<{ stateAt: number; questionsAt: number }> = new Array(records.length);
    for (let i = 0; i < records.length; i++) {
      const r = records[i]!;
      const l = lens[i]!;
      w.buf[w.pos++] = tag(5, LENGTH);
      w.varint(l.size);
      w.string(1, r.recordKey, l.runId);
      w.string(2, r.id, l.id);
      const stateAt = w.reserve(3, r.stateBytes);
      const questionsAt = w.reserve(4, r.questionsBytes);
      places[i] = { stateAt, questionsAt };
      w.string(5, r.payloadSha256, l.sha);
      const next = records[i + 1];
      if (!next || next.offset !== r.offset + r.stateBytes + r.questionsBytes) {
        copyRun(spill, records, places, runStart, i + 1, w.buf);
        runStart = i + 1;
      }
    }
    for (let i = 0; i < unit.groupIds.length; i++) {
      w.buf[w.pos++] = tag(6, LENGTH);
      w.varint(groupIdLens[i]!);
      w.pos += w.buf.write(unit.groupIds[i]!, w.pos, "utf8");
    }
    if (backup) {
      w.buf[w.pos++] = tag(7, VARINT);
      w.buf[w.pos++] = 1;
    }
    if (w.pos !== w.buf.length) throw new Error(`WorkUnit ${unit.unitId}: encoded ${w.pos} bytes, sized ${w.buf.length}`);
  } catch (err) {
    pool.give(w.buf);
    throw err;
  }
  rememberSentUnit(unit.unitId, records);
  return new EncodedUnit(w.buf, pool);
}
