// The results and metrics bus (docs/design.md "bus"): the coordinator publishes every committed result
// line, run events and status; the scorer consumes results and publishes metrics; dashboards
// subscribe. InProcessBus (one machine) and NatsBus (a cluster, JetStream) implement it alike.
//
// The results files on disk stay the source of truth. The bus never throws on an outage when
// publishing: it reports the failure so the coordinator can note a catch-up point and republish
// later with the same message ids (catchUpResults below).
import { createHash } from "node:crypto";
import { z } from "zod";
import { UdmError, UsageError } from "../errors.js";
import { lineHasErrors, type ResultLine, isCommittedLine, type CommittedLine } from "../results/index.js";
import { RUN_END_STATES, RUN_STATES, type RunStatus } from "../run-status/index.js";

/** Bump when the meaning of a bus message changes; sent with every message. */
export const BUS_FORMAT = 1;

/** JetStream names (also used by InProcessBus for messages it reports). */
export const RESULTS_STREAM = "UDM_RESULTS";
export const METRICS_STREAM = "UDM_METRICS";
export const EVENTS_STREAM = "UDM_EVENTS";
export const STATUS_BUCKET = "udm_runs";

/**
 * How long the bus drops a re-published result with the same message id. A result is
 * re-published when a publish timed out but was stored (the ack was lost) or when the coordinator
 * replays its disk after an outage. 10 minutes covers client retries and a NATS restart or
 * failover (the server rebuilds its duplicate table from stored messages); a longer window costs
 * server memory per message id (one entry per result in the window). A replay after a longer
 * outage can still deliver a line twice: the scorer dedupes by run_id itself.
 */
export const DEFAULT_DUPLICATE_WINDOW_MS = 10 * 60_000;

export const SUMMARY_METRICS = "summary";

export const subject = {
  results: (runId: string, track: string) => `udm.${runId}.results.${track}`,
  allResults: (runId: string) => `udm.${runId}.results.>`,
  events: (runId: string) => `udm.${runId}.events`,
  metrics: (runId: string, track: string) => `udm.${runId}.metrics.${track}`,
  allMetrics: (runId: string) => `udm.${runId}.metrics.>`,
};

/**
 * The JetStream message id of a result: unique per run and record, so one run never drops another's.
 * A line with errors is redone on the coordinator's next start and its new line supersedes it (the
 * later line of a run_id wins): such a line's id also carries a hash of its content, so the new line
 * is not dropped as a re-publish of the old one within the duplicate window, while re-publishing the
 * same line (catch-up from disk) still is.
 */
export function resultMessageId(runId: string, message: ResultMessage): string {
  if (!message.errored) return `${runId}/${message.recordKey}`;
  return `${runId}/${message.recordKey}/e${createHash("sha256").update(message.text).digest("hex").slice(0, 16)}`;
}

/** What a result's message carries: the line's text, and what its id is made of. */
export interface ResultMessage {
  recordKey: string;
  errored: boolean;
  text: string;
}

/** A committed line as written is published as is; a parsed one is written out once. */
export function resultMessage(line: ResultLine | CommittedLine): ResultMessage {
  if (isCommittedLine(line)) return line;
  return { recordKey: line.run_id, errored: lineHasErrors(line), text: JSON.stringify(line) };
}

const TOKEN = /^[A-Za-z0-9_-]+$/;

/**
 * A run id, track or durable name becomes one NATS subject token (or a KV key / consumer name),
 * so it must not contain `.`, `*`, `>` or spaces. Checked the same way by both buses.
 */
export function checkToken(kind: string, value: string): string {
  if (!TOKEN.test(value)) {
    throw new UsageError(`${kind} ${JSON.stringify(value)} must be letters, digits, "-" or "_" (it becomes a NATS subject token)`);
  }
  return value;
}

// ---- Events --------------------------------------------------------------------------------

export const BusEventSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("unit_leased"), at: z.string(), unitId: z.string(), track: z.string(), agentId: z.string(), records: z.number().int().nonnegative(), backup: z.boolean().optional() }),
  z.object({ type: z.literal("unit_done"), at: z.string(), unitId: z.string(), track: z.string(), agentId: z.string(), results: z.number().int().nonnegative() }),
  z.object({ type: z.literal("unit_expired"), at: z.string(), unitId: z.string(), track: z.string(), agentId: z.string() }),
  z.object({ type: z.literal("agent_joined"), at: z.string(), agentId: z.string(), model: z.string().optional(), engineUrl: z.string().optional() }),
  z.object({ type: z.literal("agent_left"), at: z.string(), agentId: z.string(), reason: z.string() }),
  z.object({ type: z.literal("track_complete"), at: z.string(), track: z.string(), records: z.number().int().nonnegative() }),
  z.object({ type: z.literal("run_complete"), at: z.string(), state: z.enum(RUN_END_STATES), reason: z.string().optional() }),
]);
/** Something that happened in a run, for dashboards and the scorer (`udm.<run>.events`). */
export type BusEvent = z.infer<typeof BusEventSchema>;

// ---- Metrics -------------------------------------------------------------------------------

/** What the scorer publishes per track (and once as "summary"); the shape of `metrics` is the scorer's. */
export const MetricsMessageSchema = z.object({
  track: z.string(),
  /** True once the track's last record is in: these are its final numbers. */
  final: z.boolean(),
  records: z.number().int().nonnegative(),
  metrics: z.record(z.string(), z.unknown()),
});
export type MetricsMessage = z.infer<typeof MetricsMessageSchema>;
/** What a publisher passes: any object as `metrics` (the scorer's TrackMetrics interface fits). */
export type MetricsInput = Omit<MetricsMessage, "metrics"> & { metrics: object };

// ---- Status --------------------------------------------------------------------------------

/** The run's status in the KV bucket; the coordinator may add fields (kept as sent). */
export const RunStatusRecordSchema = z.looseObject({
  runId: z.string(),
  /** starting | running | draining | complete | failed | cancelled (proto RunStatus.state) */
  state: z.enum(RUN_STATES),
  updatedAt: z.string(),
  recordsTotal: z.number().int().nonnegative().optional(),
  recordsCommitted: z.number().int().nonnegative().optional(),
});
export type RunStatusRecord = z.infer<typeof RunStatusRecordSchema>;
/** What a writer passes: the core fields plus anything else (an interface with more fields fits). */
export type RunStatusInput = Pick<RunStatusRecord, "runId" | "state" | "updatedAt" | "recordsTotal" | "recordsCommitted"> & object;

/** What the coordinator puts in the bucket: the core fields, the suite, and each track's progress (the scorer's scope). */
export interface BusRunStatus extends RunStatusInput {
  suiteIdentity: string;
  agents: number;
  recordsPerSecond: number;
  tracks: Array<{ track: string; family: string; records: number; committed: number; complete: boolean }>;
}

/** The bus's form of a run status (its KV record), stamped `updatedAt`. */
export function busStatusOf(s: RunStatus, updatedAt: string): BusRunStatus {
  return {
    runId: s.runId,
    state: s.state,
    updatedAt,
    recordsTotal: s.recordsTotal,
    recordsCommitted: s.recordsCommitted,
    suiteIdentity: s.suiteIdentity,
    agents: s.agents.length,
    recordsPerSecond: s.recordsPerSecond,
    tracks: s.tracks.map((t) => ({ track: t.track, family: t.family, records: t.records, committed: t.committed, complete: t.complete })),
  };
}

// ---- The interface -------------------------------------------------------------------------

export type BusState = "connected" | "disconnected" | "reconnecting" | "closed";

/** The outcome of a publish; a failure is reported, never thrown, so callers keep going. */
export type PublishOutcome =
  | { ok: true; /** Dropped as a re-publish of the same message id within the window. */ duplicate: boolean; seq: number }
  | { ok: false; error: Error };

export interface ResultDelivery {
  runId: string;
  track: string;
  /** Position in the run's results stream. */
  seq: number;
  /** 1 on first delivery; more when an earlier delivery was not acked in time or the consumer died. */
  deliveryCount: number;
}

export interface ConsumeResultsOptions {
  /** Durable consumer name: a restarted consumer with the same name resumes where acks left off. */
  durable: string;
  /**
   * Called once per delivered line, one at a time in stream order. Call `ack()` only after the
   * line is applied: an un-acked line is delivered again after `ackWaitMs` (also after a restart).
   * A throw or rejection leaves the line un-acked (redelivered) and goes to `onError`.
   */
  onResult(line: ResultLine, ack: () => void, delivery: ResultDelivery): void | Promise<void>;
  /** Default: logged. Also receives messages that are not a valid results line (those are dropped). */
  onError?(error: Error, delivery: ResultDelivery): void;
  /** Redelivery delay of an un-acked line (default 30 s). Fixed when the durable is first created. */
  ackWaitMs?: number;
}

export interface ResultConsumer {
  /** Stops delivering; un-acked lines stay with the durable. */
  stop(): Promise<void>;
}

export interface Subscription {
  stop(): Promise<void>;
}

export interface SubscribeEventsOptions {
  /** "new" (default): events after subscribing; "start": every stored event of the run first. */
  from?: "new" | "start";
}

export interface SubscribeMetricsOptions {
  /** "latest" (default): the last message of each track first, then live; "new": only live. */
  from?: "latest" | "new";
}

export interface Bus {
  readonly kind: "in-process" | "nats";
  /** Connection state; InProcessBus is "connected" until closed. */
  readonly state: BusState;
  /** Calls `listener` on every state change; returns the unsubscribe function. */
  onStateChange(listener: (state: BusState) => void): () => void;

  /** Publishes one committed result (`udm.<run>.results.<track>`), message id resultMessageId(). */
  publishResult(runId: string, track: string, line: ResultLine | CommittedLine): Promise<PublishOutcome>;
  publishEvent(runId: string, event: BusEvent): Promise<PublishOutcome>;
  /** `track` is a track name or SUMMARY_METRICS. */
  publishMetrics(runId: string, track: string, metrics: MetricsInput): Promise<PublishOutcome>;

  /** Writes the run's status (KV `udm_runs`, key = run id). Throws when the bus is unreachable. */
  putStatus(runId: string, status: RunStatusInput): Promise<void>;
  getStatus(runId: string): Promise<RunStatusRecord | undefined>;
  /** Every run with a status in the bucket (any order); the scorer picks its run from these. */
  listStatuses(): Promise<RunStatusRecord[]>;

  /** A durable consumer of the run's results, from the start of the stream for a new durable. */
  consumeResults(runId: string, options: ConsumeResultsOptions): Promise<ResultConsumer>;
  subscribeEvents(runId: string, onEvent: (event: BusEvent) => void, options?: SubscribeEventsOptions): Promise<Subscription>;
  subscribeMetrics(runId: string, onMetrics: (message: MetricsMessage) => void, options?: SubscribeMetricsOptions): Promise<Subscription>;

  close(): Promise<void>;
}

export interface CatchUpReport {
  published: number;
  duplicates: number;
  failed: number;
  /** The first failure, when any: the caller keeps its catch-up point and tries again later. */
  firstError?: Error;
}

/**
 * Republishes results written to disk while the bus was unreachable. Same message ids as the live
 * path, so lines that did reach the stream are dropped as duplicates within the window. Stops at
 * the first failure (the bus went down again) so the caller can keep its catch-up point.
 */
export async function catchUpResults(
  bus: Bus,
  runId: string,
  items: Iterable<{ track: string; line: ResultLine }> | AsyncIterable<{ track: string; line: ResultLine }>,
): Promise<CatchUpReport> {
  const report: CatchUpReport = { published: 0, duplicates: 0, failed: 0 };
  for await (const { track, line } of items) {
    const outcome = await bus.publishResult(runId, track, line);
    if (!outcome.ok) {
      report.failed++;
      report.firstError = outcome.error;
      break;
    }
    if (outcome.duplicate) report.duplicates++;
    else report.published++;
  }
  return report;
}

/** A bus operation that failed for a reason other than an outage (bad config, server refused). */
export class BusError extends UdmError {}
