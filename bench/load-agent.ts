// A load generator that speaks the agent protocol for coordinator-bench: it attaches like an agent
// and answers every record of each unit at once with what an agent sends (a distribution per
// question, drawn from a seeded generator so that probabilities have the digits real ones have and
// documents rarely tie; answered_by naming the method of each question; usage and latency), but its
// answers are built before the run, from the suite, and it reads and writes the stream's protobuf
// bytes itself.
// A unit costs it a scan for unit and record ids and a copy of prebuilt bytes, so on a machine it
// shares with the coordinator, the coordinator's cost is what the figures measure (the generic
// decoder of a real agent spends more on a unit's payload text than the coordinator spends on it).
import * as grpc from "@grpc/grpc-js";
import { openSuite, readTrackRecords, selectFiles } from "../common/suite/index.js";
import { seededRandom } from "../sim/index.js";
import { loadPackageDefinition, type ProtoGrpcType } from "../proto/loader.js";
import type { AgentMessage } from "../proto/generated/udm/v1/AgentMessage.js";

const LENGTH = 2;
const FIXED64 = 1;

/**
 * Per run_id, the part of its RecordResult that does not depend on the unit: usage, latency_ms,
 * answered_by, prob_questions and prob_values.
 */
export type PrebuiltAnswers = Map<string, Buffer>;

/** Reads the suite (or the given tracks) and prebuilds each record's answer (the same every run: a fixed seed). */
export async function prebuildAnswers(suiteDir: string, tracks?: readonly string[]): Promise<PrebuiltAnswers> {
  const answers: PrebuiltAnswers = new Map();
  const random = seededRandom(26);
  const method = Buffer.from("systemone");
  for (const file of selectFiles(openSuite(suiteDir), tracks ? { tracks } : {})) {
    for await (const rec of readTrackRecords(file)) {
      const keys = Object.keys(rec.questions);
      const usage = Buffer.concat([varintField(1, 800 + Math.floor(random() * 1200)), varintField(3, keys.length), varintField(4, 1)]);
      const latency = Buffer.alloc(9);
      latency[0] = 7 * 8 + FIXED64;
      latency.writeDoubleLE(50 + random() * 100, 1);
      const parts: Buffer[] = [lengthField(6, usage), latency];
      for (const key of keys) parts.push(lengthField(9, Buffer.concat([lengthField(1, Buffer.from(key)), lengthField(2, method)])));
      const values: number[] = [];
      for (const key of keys) {
        const q = rec.questions[key]!;
        const n = q.type === "noul" ? 2 : Object.keys(q.criteria).length;
        parts.push(lengthField(12, Buffer.from(key)));
        const weights = Array.from({ length: n }, () => random());
        const total = weights.reduce((a, b) => a + b, 0);
        for (const w of weights) values.push(w / total);
      }
      const packed = Buffer.alloc(values.length * 8);
      values.forEach((v, i) => packed.writeDoubleLE(v, i * 8));
      parts.push(lengthField(13, packed));
      answers.set(rec._evaluation.run_id, Buffer.concat(parts));
    }
  }
  return answers;
}

export interface LoadAgentStats {
  units: number;
  records: number;
  /** Most state and question text bytes in one unit. */
  maxUnitPayloadBytes: number;
  /** Bytes of the WorkUnit messages received, and of the ResultBatch messages sent (protobuf, before gRPC framing). */
  unitBytes: number;
  resultBytes: number;
}

/** Attaches to the coordinator and answers until it says drain. */
export function runLoadAgent(address: string, agentId: string, credit: number, answers: PrebuiltAnswers, stats: LoadAgentStats): Promise<void> {
  const proto = grpc.loadPackageDefinition(loadPackageDefinition()) as unknown as ProtoGrpcType;
  const service = proto.udm.v1.Coordinator.service.Attach;
  const encode = service.requestSerialize as (m: AgentMessage) => Buffer;
  const client = new grpc.Client(address, grpc.credentials.createInsecure(), { "grpc.max_receive_message_length": -1 });
  const raw = (b: Buffer) => b;
  const call = client.makeBidiStreamRequest<Buffer, Buffer>(service.path, raw, raw);
  const creditMsg = encode({ credit: { units: 1 } });
  return new Promise((done) => {
    call.on("data", (msg: Buffer) => {
      const kind = topLevelKind(msg);
      if (kind.field === 2) {
        const unit = scanUnit(msg, kind.start, kind.end);
        stats.units++;
        stats.unitBytes += msg.length;
        stats.maxUnitPayloadBytes = Math.max(stats.maxUnitPayloadBytes, unit.payloadBytes);
        const unitIdField = lengthField(1, unit.unitId);
        const results: Buffer[] = [];
        for (const r of unit.records) {
          const prebuilt = answers.get(r.runId.toString());
          if (!prebuilt) throw new Error(`load agent: no prebuilt answer for ${r.runId.toString()}`);
          results.push(lengthField(1, Buffer.concat([unitIdField, lengthField(2, r.runId), lengthField(8, r.sha), prebuilt])));
          stats.records++;
        }
        const batch = lengthField(6, Buffer.concat(results));
        stats.resultBytes += batch.length;
        call.write(batch);
        call.write(lengthField(4, unitIdField));
        call.write(creditMsg);
      } else if (kind.field === 4) call.end();
    });
    call.on("error", () => undefined);
    call.on("status", () => {
      client.close();
      done();
    });
    call.write(encode({ hello: { agent_id: agentId, model: "bench/load-agent", methods: ["systemone"], capacity: credit, ready: true } }));
    call.write(encode({ credit: { units: credit } }));
  });
}

const EMPTY: Buffer = Buffer.alloc(0);

interface ScannedUnit {
  unitId: Buffer;
  records: Array<{ runId: Buffer; sha: Buffer }>;
  payloadBytes: number;
}

/** The WorkUnit's id, and each record's run_id and payload_sha256 (as bytes; the rest skipped). */
function scanUnit(buf: Buffer, start: number, end: number): ScannedUnit {
  const unit: ScannedUnit = { unitId: EMPTY, records: [], payloadBytes: 0 };
  fields(buf, start, end, (field, s, e) => {
    if (field === 1) unit.unitId = buf.subarray(s, e);
    else if (field === 5) {
      const rec = { runId: EMPTY, sha: EMPTY };
      fields(buf, s, e, (f, fs, fe) => {
        if (f === 1) rec.runId = buf.subarray(fs, fe);
        else if (f === 5) rec.sha = buf.subarray(fs, fe);
        else if (f === 3 || f === 4) unit.payloadBytes += fe - fs;
      });
      unit.records.push(rec);
    }
  });
  return unit;
}

function topLevelKind(buf: Buffer): { field: number; start: number; end: number } {
  let kind = { field: 0, start: 0, end: 0 };
  fields(buf, 0, buf.length, (field, start, end) => (kind = { field, start, end }));
  return kind;
}

/** Calls `each` with the bounds of every length-delimited field in [start, end); skips the others. */
function fields(buf: Buffer, start: number, end: number, each: (field: number, start: number, end: number) => void): void {
  let pos = start;
  const varint = () => {
    let v = 0;
    let mul = 1;
    for (;;) {
      const b = buf[pos++]!;
      v += (b & 0x7f) * mul;
      if (b < 0x80) return v;
      mul *= 128;
    }
  };
  while (pos < end) {
    const tag = varint();
    const wt = tag & 7;
    if (wt === LENGTH) {
      const len = varint();
      each(Math.floor(tag / 8), pos, pos + len);
      pos += len;
    } else if (wt === 0) varint();
    else if (wt === FIXED64) pos += 8;
    else pos += 4;
  }
}

function varintBytes(n: number): number[] {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n % 128) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return out;
}

function varintField(field: number, value: number): Buffer {
  return Buffer.from([...varintBytes(field * 8), ...varintBytes(value)]);
}

function lengthField(field: number, value: Buffer): Buffer {
  return Buffer.concat([Buffer.from([...varintBytes(field * 8 + LENGTH), ...varintBytes(value.length)]), value]);
}
