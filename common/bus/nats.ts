// The bus in a cluster: NATS JetStream (@nats-io v3 modular client). Works with nats-server 2.9
// (Debian's 2.9.10) and newer, so it uses no stream or consumer field added in 2.10+ (metadata,
// filter_subjects arrays, first_seq, subject transforms, compression, consumer limits).
//
//   UDM_RESULTS  udm.*.results.>   file, duplicate window, durable pull consumers with explicit ack
//   UDM_METRICS  udm.*.metrics.>   file, a short history per track; dashboards read the latest
//   UDM_EVENTS   udm.*.events      file
//   KV udm_runs  key = run id      the run's status
import { readFileSync } from "node:fs";
import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  jetstream,
  jetstreamManager,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type StreamConfig,
  type StreamInfo,
} from "@nats-io/jetstream";
import { Kvm, type KV } from "@nats-io/kv";
import { connect, credsAuthenticator, headers, nanos, type NatsConnection, type NodeConnectionOptions } from "@nats-io/transport-node";
import {
  BUS_FORMAT,
  BusError,
  BusEventSchema,
  checkToken,
  DEFAULT_DUPLICATE_WINDOW_MS,
  EVENTS_STREAM,
  METRICS_STREAM,
  MetricsMessageSchema,
  RESULTS_STREAM,
  resultMessage,
  resultMessageId,
  RunStatusRecordSchema,
  STATUS_BUCKET,
  subject,
  SUMMARY_METRICS,
  type Bus,
  type BusEvent,
  type BusState,
  type ConsumeResultsOptions,
  type MetricsInput,
  type MetricsMessage,
  type PublishOutcome,
  type ResultConsumer,
  type ResultDelivery,
  type RunStatusInput,
  type RunStatusRecord,
  type SubscribeEventsOptions,
  type SubscribeMetricsOptions,
  type Subscription,
} from "./bus.js";
import { createLogger, type Logger } from "../log.js";
import { type CommittedLine, ResultLineSchema, type ResultLine } from "../results/index.js";
import { checkResultMac, RESULTS_MAC_HEADER, resultMac, resultsKey, ResultRejectedError } from "./results-mac.js";

export interface NatsTlsOptions {
  /** CA bundle that signed the server's certificate (PEM file). */
  caFile?: string;
  /** Client certificate for mutual TLS (PEM file); needs keyFile. */
  certFile?: string;
  keyFile?: string;
}

export interface NatsBusOptions {
  /** nats://host:port URLs (several for a cluster). */
  servers: string[];
  user?: string;
  pass?: string;
  token?: string;
  /** A .creds file (JWT + NKey seed) of a decentralized-auth account. */
  credsFile?: string;
  /** When set, the connection must use TLS. */
  tls?: NatsTlsOptions;
  /** Client name shown by the server's monitoring (default "udm-orch"). */
  name?: string;
  /** Default DEFAULT_DUPLICATE_WINDOW_MS (see there why). */
  duplicateWindowMs?: number;
  /** How long streams keep a run's messages (default 7 days); the results files stay the source of truth. */
  maxAgeMs?: number;
  /** Stream and KV replicas (default 1; 3 on a 3-node JetStream cluster). */
  replicas?: number;
  /** How long a connection attempt waits for the server's handshake (default 20 s). */
  connectTimeoutMs?: number;
  /** How long a publish waits for JetStream's ack before it is reported as failed (default 5 s). */
  publishTimeoutMs?: number;
  /**
   * The run's token (the coordinator's --token): results this bus publishes carry a MAC keyed by
   * it (results-mac.ts), and its results consumers drop every line whose MAC does not verify.
   * Without it results are neither signed nor checked: the bus is then unauthenticated.
   */
  resultsToken?: string;
  logger?: Logger;
}

const DEFAULT_MAX_AGE_MS = 7 * 24 * 3600_000;
const DEFAULT_ACK_WAIT_MS = 30_000;
/** Messages the client pulls ahead of the handler; their ack wait runs while they wait. */
const PULL_BATCH = 256;

/**
 * Reconnect forever: fast at first (a NATS restart takes about a second), then at most every 5 s.
 * The delay grows with the length of the outage rather than with a retry counter because the
 * client asks for a delay more than once per attempt.
 */
export function reconnectDelayMs(outageMs: number, random: () => number = Math.random): number {
  const base = Math.min(5000, Math.max(250, outageMs / 4));
  return Math.round(base * (1 + random() * 0.2));
}

function reconnectDelay(since: () => number | undefined): () => number {
  return () => {
    const start = since();
    return reconnectDelayMs(start === undefined ? 0 : Date.now() - start);
  };
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

function describeServers(servers: string[]): string {
  return servers.map((s) => s.replace(/\/\/[^@/]*@/, "//***@")).join(",");
}

/**
 * JetStream API calls (streams, consumers, KV): a server on a machine busy with its clients can take
 * several seconds to answer one (seen at 5 s on 2 shared cores), which is slow, not down.
 */
const API_TIMEOUT_MS = 30_000;

export class NatsBus implements Bus {
  readonly kind = "nats" as const;
  private current: BusState = "connected";
  private disconnectedAt: number | undefined;
  private readonly stateListeners = new Set<(s: BusState) => void>();
  private readonly consumers = new Set<{ stop(): Promise<void> }>();
  private readonly log: Logger;
  private readonly hdrsFormat = String(BUS_FORMAT);
  /** Results keys by run id (with a results token). */
  private readonly keys = new Map<string, Buffer>();

  private constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly kv: KV,
    log: Logger,
    private readonly resultsToken: string | undefined,
  ) {
    this.log = log;
  }

  /** The run's results key, when this bus has a token. */
  private resultsKey(runId: string): Buffer | undefined {
    if (this.resultsToken === undefined) return undefined;
    let key = this.keys.get(runId);
    if (!key) this.keys.set(runId, (key = resultsKey(this.resultsToken, runId)));
    return key;
  }

  /**
   * Connects, then creates or updates the streams and the status bucket. Fails with a BusError
   * when the first connection or the setup fails (bad URL, auth, no JetStream); after that it
   * reconnects forever and reports outages through `state`.
   */
  static async connect(options: NatsBusOptions): Promise<NatsBus> {
    const log = options.logger ?? createLogger("bus");
    let since: number | undefined;
    const where = describeServers(options.servers);
    const connOpts: NodeConnectionOptions = {
      servers: options.servers,
      name: options.name ?? "udm-orch",
      maxReconnectAttempts: -1,
      reconnectDelayHandler: reconnectDelay(() => since),
      // A dead peer without a closed TCP connection is noticed within about a minute.
      pingInterval: 20_000,
      maxPingOut: 3,
      timeout: options.connectTimeoutMs ?? 20_000,
    };
    if (options.user !== undefined) {
      connOpts.user = options.user;
      connOpts.pass = options.pass ?? "";
    }
    if (options.token !== undefined) connOpts.token = options.token;
    if (options.credsFile !== undefined) {
      let creds: Uint8Array;
      try {
        creds = readFileSync(options.credsFile);
      } catch (err) {
        throw new BusError(`cannot read NATS creds file ${options.credsFile}: ${asError(err).message}`, { cause: err });
      }
      connOpts.authenticator = credsAuthenticator(creds);
    }
    if (options.tls) {
      connOpts.tls = {
        ...(options.tls.caFile !== undefined && { caFile: options.tls.caFile }),
        ...(options.tls.certFile !== undefined && { certFile: options.tls.certFile }),
        ...(options.tls.keyFile !== undefined && { keyFile: options.tls.keyFile }),
      };
    }

    let nc: NatsConnection;
    try {
      nc = await connect(connOpts);
    } catch (err) {
      throw new BusError(`cannot connect to NATS at ${where}: ${asError(err).message}`, { cause: err });
    }
    try {
      const jsm = await jetstreamManager(nc, { timeout: API_TIMEOUT_MS });
      const bus = await NatsBus.setUp(nc, jsm, options, log);
      bus.watchStatus((t) => (since = t));
      return bus;
    } catch (err) {
      await nc.close().catch(() => undefined);
      if (err instanceof BusError) throw err;
      throw new BusError(`cannot set up JetStream at ${where} (is the server started with -js?): ${asError(err).message}`, { cause: err });
    }
  }

  private static async setUp(nc: NatsConnection, jsm: JetStreamManager, options: NatsBusOptions, log: Logger): Promise<NatsBus> {
    const replicas = options.replicas ?? 1;
    const maxAge = nanos(options.maxAgeMs ?? DEFAULT_MAX_AGE_MS);
    const base = { storage: StorageType.File, retention: RetentionPolicy.Limits, discard: DiscardPolicy.Old, num_replicas: replicas, max_age: maxAge };
    await ensureStream(jsm, {
      ...base,
      name: RESULTS_STREAM,
      subjects: ["udm.*.results.>"],
      duplicate_window: nanos(options.duplicateWindowMs ?? DEFAULT_DUPLICATE_WINDOW_MS),
    });
    // Dashboards want the latest numbers of each track; a short history is enough.
    await ensureStream(jsm, { ...base, name: METRICS_STREAM, subjects: ["udm.*.metrics.>"], max_msgs_per_subject: 16 });
    await ensureStream(jsm, { ...base, name: EVENTS_STREAM, subjects: ["udm.*.events"] });

    const js = jetstream(nc, { timeout: options.publishTimeoutMs ?? 5000 });
    // Status reads and listings are not on the hot path: they get the API's patience, not a publish's.
    const kvm = new Kvm(jetstream(nc, { timeout: API_TIMEOUT_MS }));
    let kv: KV;
    try {
      kv = await kvm.create(STATUS_BUCKET, { history: 1, storage: StorageType.File, replicas });
    } catch (err) {
      if (isPermissionViolation(err)) throw notCreatedYet(`KV ${STATUS_BUCKET}`);
      // Created earlier with other settings (another version, an operator's change): use it as is.
      log.debug("status bucket exists with other settings; binding to it", { error: asError(err).message });
      kv = await kvm.open(STATUS_BUCKET);
    }
    return new NatsBus(nc, js, jsm, kv, log, options.resultsToken);
  }

  private watchStatus(setSince: (t: number | undefined) => void): void {
    void (async () => {
      for await (const s of this.nc.status()) {
        if (s.type === "disconnect") {
          this.disconnectedAt = Date.now();
          setSince(this.disconnectedAt);
          this.setState("disconnected");
          this.log.warn("NATS disconnected; results still go to disk and are republished on reconnect", { server: s.server });
        } else if (s.type === "reconnecting") {
          this.setState("reconnecting");
        } else if (s.type === "reconnect") {
          setSince(undefined);
          this.setState("connected");
          this.log.info("NATS reconnected", { server: s.server, outageMs: this.disconnectedAt ? Date.now() - this.disconnectedAt : 0 });
        }
      }
    })().catch((err: unknown) => this.log.error("NATS status watcher stopped", { error: asError(err).message }));
    void this.nc.closed().then(() => this.setState("closed"));
  }

  private setState(next: BusState): void {
    if (next === this.current) return;
    this.current = next;
    for (const l of this.stateListeners) {
      try {
        l(next);
      } catch (err) {
        this.log.warn("bus state listener threw", { error: asError(err).message });
      }
    }
  }

  get state(): BusState {
    return this.current;
  }

  onStateChange(listener: (state: BusState) => void): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  /** Publishes to JetStream; while not connected it fails at once instead of queueing behind the outage. */
  private async publish(subj: string, body: string, msgID?: string, key?: Buffer): Promise<PublishOutcome> {
    if (this.current !== "connected") return { ok: false, error: new BusError(`NATS is ${this.current}`) };
    const h = headers();
    h.set("Udm-Format", this.hdrsFormat);
    // Over the UTF-8 bytes the client sends for `body`, which the consumer checks as received.
    const mac = key ? resultMac(key, Buffer.from(body, "utf8")) : undefined;
    if (mac) {
      h.set(RESULTS_MAC_HEADER, mac);
      // A signed message's id ends in its MAC: only the coordinator can name it, so nobody can
      // publish junk first under a record's (predictable) id and have the real line dropped as a
      // duplicate. The same bytes give the same id, so a republished line is still deduplicated.
      if (msgID !== undefined) msgID = `${msgID}/m${mac.slice(0, 16)}`;
    }
    try {
      const ack = await this.js.publish(subj, body, { headers: h, ...(msgID !== undefined && { msgID }) });
      return { ok: true, duplicate: ack.duplicate, seq: ack.seq };
    } catch (err) {
      return { ok: false, error: new BusError(`publish to ${subj} failed: ${asError(err).message}`, { cause: err }) };
    }
  }

  async publishResult(runId: string, track: string, line: ResultLine | CommittedLine): Promise<PublishOutcome> {
    const message = resultMessage(line);
    return this.publish(subject.results(checkToken("run id", runId), checkToken("track", track)), message.text, resultMessageId(runId, message), this.resultsKey(runId));
  }

  async publishEvent(runId: string, event: BusEvent): Promise<PublishOutcome> {
    return this.publish(subject.events(checkToken("run id", runId)), JSON.stringify(event));
  }

  async publishMetrics(runId: string, track: string, metrics: MetricsInput): Promise<PublishOutcome> {
    if (track !== SUMMARY_METRICS) checkToken("track", track);
    return this.publish(subject.metrics(checkToken("run id", runId), track), JSON.stringify(metrics));
  }

  async putStatus(runId: string, status: RunStatusInput): Promise<void> {
    try {
      await this.kv.put(checkToken("run id", runId), JSON.stringify(status));
    } catch (err) {
      throw new BusError(`cannot write the status of run ${runId} to NATS KV ${STATUS_BUCKET}: ${asError(err).message}`, { cause: err });
    }
  }

  async getStatus(runId: string): Promise<RunStatusRecord | undefined> {
    let entry;
    try {
      entry = await this.kv.get(checkToken("run id", runId));
    } catch (err) {
      throw new BusError(`cannot read the status of run ${runId} from NATS KV ${STATUS_BUCKET}: ${asError(err).message}`, { cause: err });
    }
    if (!entry || entry.operation !== "PUT") return undefined;
    return RunStatusRecordSchema.parse(entry.json());
  }

  async listStatuses(): Promise<RunStatusRecord[]> {
    const out: RunStatusRecord[] = [];
    try {
      for await (const key of await this.kv.keys()) {
        const entry = await this.kv.get(key);
        if (!entry || entry.operation !== "PUT") continue;
        const parsed = RunStatusRecordSchema.safeParse(entry.json());
        if (parsed.success) out.push(parsed.data);
        else this.log.warn("ignored a run status that is not one", { key, error: parsed.error.message });
      }
    } catch (err) {
      throw new BusError(`cannot list the runs in NATS KV ${STATUS_BUCKET}: ${asError(err).message}`, { cause: err });
    }
    return out;
  }

  async consumeResults(runId: string, options: ConsumeResultsOptions): Promise<ResultConsumer> {
    checkToken("run id", runId);
    const durable = checkToken("durable", options.durable);
    // A durable name is per stream; the run id keeps two runs' scorers apart.
    const name = `${runId}_${durable}`;
    try {
      await this.jsm.consumers.info(RESULTS_STREAM, name);
    } catch (err) {
      if (!(err instanceof JetStreamApiError && err.code === 10014)) throw wrap(err, `cannot look up consumer ${name}`);
      try {
        await this.jsm.consumers.add(RESULTS_STREAM, {
          durable_name: name,
          ack_policy: AckPolicy.Explicit,
          deliver_policy: DeliverPolicy.All,
          filter_subject: subject.allResults(runId),
          ack_wait: nanos(options.ackWaitMs ?? DEFAULT_ACK_WAIT_MS),
          max_ack_pending: 4 * PULL_BATCH,
        });
      } catch (e) {
        throw wrap(e, `cannot create consumer ${name}`);
      }
    }
    const consumer = await this.js.consumers.get(RESULTS_STREAM, name);
    const messages = await consumer.consume({ max_messages: PULL_BATCH });
    const key = this.resultsKey(runId);
    const report = (error: Error, delivery: ResultDelivery) => {
      try {
        if (options.onError) return options.onError(error, delivery);
      } catch (err) {
        this.log.warn("onError threw", { error: asError(err).message });
      }
      this.log.warn("result consumer error", { durable, seq: delivery.seq, error: error.message });
    };
    const loop = (async () => {
      for await (const m of messages) {
        const delivery: ResultDelivery = { runId, track: m.subject.split(".").slice(3).join("."), seq: m.info.streamSequence, deliveryCount: m.info.deliveryCount };
        const line = key ? checkedResult(m, key) : parseResult(m);
        if (line instanceof Error) {
          m.term(); // can never apply: drop it rather than redeliver forever
          report(line, delivery);
          continue;
        }
        let acked = false;
        const ack = () => {
          if (acked) return;
          acked = true;
          m.ack();
        };
        try {
          await options.onResult(line, ack, delivery);
        } catch (err) {
          report(asError(err), delivery);
        }
      }
    })().catch((err: unknown) => this.log.error("result consumer stopped", { error: asError(err).message }));
    return this.track(messages, loop);
  }

  private track(messages: ConsumerMessages, loop: Promise<void>): { stop(): Promise<void> } {
    const handle = {
      stop: async () => {
        this.consumers.delete(handle);
        await messages.close().catch(() => undefined);
        await loop.catch(() => undefined);
      },
    };
    this.consumers.add(handle);
    return handle;
  }

  async subscribeEvents(runId: string, onEvent: (event: BusEvent) => void, options: SubscribeEventsOptions = {}): Promise<Subscription> {
    const subj = subject.events(checkToken("run id", runId));
    const consumer =
      options.from === "start"
        ? await this.js.consumers.get(EVENTS_STREAM, { filter_subjects: subj, deliver_policy: DeliverPolicy.All })
        : await this.js.consumers.get(EVENTS_STREAM, { filter_subjects: subj, opt_start_seq: await this.nextSeq(EVENTS_STREAM) });
    return this.follow(await consumer.consume(), BusEventSchema, onEvent, "event");
  }

  async subscribeMetrics(runId: string, onMetrics: (message: MetricsMessage) => void, options: SubscribeMetricsOptions = {}): Promise<Subscription> {
    const subj = subject.allMetrics(checkToken("run id", runId));
    const consumer =
      (options.from ?? "latest") === "latest"
        ? await this.js.consumers.get(METRICS_STREAM, { filter_subjects: subj, deliver_policy: DeliverPolicy.LastPerSubject })
        : await this.js.consumers.get(METRICS_STREAM, { filter_subjects: subj, opt_start_seq: await this.nextSeq(METRICS_STREAM) });
    return this.follow(await consumer.consume(), MetricsMessageSchema, onMetrics, "metrics");
  }

  /**
   * The stream sequence the next message will get. An ordered consumer that starts there (rather
   * than at "new") resumes at the right place when it is recreated after a reconnect.
   */
  private async nextSeq(stream: string): Promise<number> {
    const info = await this.jsm.streams.info(stream);
    return info.state.last_seq + 1;
  }

  private follow<T>(
    messages: ConsumerMessages,
    schema: { safeParse(v: unknown): { success: true; data: T } | { success: false; error: Error } },
    fn: (value: T) => void,
    what: string,
  ): Subscription {
    const loop = (async () => {
      for await (const m of messages) {
        let parsed: { success: true; data: T } | { success: false; error: Error };
        try {
          parsed = schema.safeParse(m.json());
        } catch (err) {
          parsed = { success: false, error: asError(err) };
        }
        if (!parsed.success) {
          this.log.warn(`dropped an invalid ${what} message`, { subject: m.subject, error: parsed.error.message });
          continue;
        }
        try {
          fn(parsed.data);
        } catch (err) {
          this.log.warn(`${what} subscriber threw`, { error: asError(err).message });
        }
      }
    })().catch((err: unknown) => this.log.error("subscription stopped", { error: asError(err).message }));
    return this.track(messages, loop);
  }

  async close(): Promise<void> {
    if (this.nc.isClosed()) return;
    await Promise.all([...this.consumers].map((c) => c.stop()));
    // Send acks still in the client's buffer before closing.
    if (this.current === "connected") await this.nc.flush().catch(() => undefined);
    await this.nc.close();
  }
}

/** A results line whose MAC verifies with the run's key; a forged or unsigned one is a ResultRejectedError. */
function checkedResult(m: JsMsg, key: Buffer): ResultLine | Error {
  const reason = checkResultMac(key, m.data, m.headers?.get(RESULTS_MAC_HEADER));
  if (reason) {
    const why = reason === "unsigned" ? "carries no MAC" : "has a MAC that does not verify";
    return new ResultRejectedError(reason, `result seq ${m.info.streamSequence} on ${m.subject} ${why} (not signed with the run's token): rejected`);
  }
  return parseResult(m);
}

function parseResult(m: JsMsg): ResultLine | Error {
  try {
    const parsed = ResultLineSchema.safeParse(m.json());
    if (parsed.success) return parsed.data;
    return new BusError(`result seq ${m.info.streamSequence} on ${m.subject} is not a results line: ${parsed.error.message}`);
  } catch (err) {
    return new BusError(`result seq ${m.info.streamSequence} on ${m.subject} is not JSON: ${asError(err).message}`, { cause: err });
  }
}

function wrap(err: unknown, what: string): BusError {
  return new BusError(`${what}: ${asError(err).message}`, { cause: err });
}

/** The stream's info, or undefined when there is no such stream. */
async function streamInfo(jsm: Pick<JetStreamManager, "streams">, name: string): Promise<StreamInfo | undefined> {
  try {
    return await jsm.streams.info(name);
  } catch (err) {
    if (err instanceof JetStreamApiError && err.code === 10059) return undefined;
    throw wrap(err, `cannot look up stream ${name}`);
  }
}

function isPermissionViolation(err: unknown): boolean {
  return /permissions violation/i.test(asError(err).message);
}

/**
 * Per-role credentials (the chart's and Compose's NATS) let only the coordinator create the
 * streams and the status bucket; a scorer that connects first says so, and waits (scorer.ts).
 */
function notCreatedYet(what: string): BusError {
  return new BusError(`${what} is not created yet, and these NATS credentials may not create it (the coordinator's do)`);
}

/**
 * Creates the stream, or updates the fields this bus owns when an earlier version created it
 * differently. Clients that connect to a fresh server at once (a coordinator and its scorers) each
 * find no stream and each add it: nats-server answers the later adds with an error ("subjects
 * overlap with an existing stream", or "stream name already in use" where the configs differ), and
 * the stream another client just made is used as if it had been there.
 */
export async function ensureStream(jsm: Pick<JetStreamManager, "streams">, cfg: Partial<StreamConfig> & { name: string; subjects: string[] }): Promise<void> {
  let existing = await streamInfo(jsm, cfg.name);
  if (!existing) {
    try {
      await jsm.streams.add(cfg);
      return;
    } catch (e) {
      if (isPermissionViolation(e)) throw notCreatedYet(cfg.name);
      existing = await streamInfo(jsm, cfg.name).catch(() => undefined);
      if (!existing) throw wrap(e, `cannot create stream ${cfg.name}`);
    }
  }
  const c = existing.config;
  const differs =
    JSON.stringify([...c.subjects].sort()) !== JSON.stringify([...cfg.subjects].sort()) ||
    (cfg.duplicate_window !== undefined && c.duplicate_window !== cfg.duplicate_window) ||
    (cfg.max_age !== undefined && c.max_age !== cfg.max_age) ||
    (cfg.max_msgs_per_subject !== undefined && c.max_msgs_per_subject !== cfg.max_msgs_per_subject);
  if (!differs) return;
  const { name: _name, storage: _storage, retention: _retention, ...updatable } = cfg;
  try {
    await jsm.streams.update(cfg.name, { ...c, ...updatable });
  } catch (e) {
    throw wrap(e, `cannot update stream ${cfg.name}`);
  }
}
