// One agent's Attach stream as the scheduler sees it (AgentLink): messages are written until
// write() returns false, then held until 'drain'; the scheduler hands the agent nothing while it
// is blocked (docs/design.md: honour write() returning false).
import type { AgentLink } from "../scheduler.js";
import type { PlannedUnit } from "../planner.js";
import type { RecordEntry } from "../suite-index.js";
import { EncodedUnit } from "./work-unit-encoder.js";
import { cancelToWire, drainToWire, type OutboundMessage as Outbound } from "./wire.js";

/** What is used of a grpc-js ServerDuplexStream (any object-mode Writable fits). */
export interface OutboundStream {
  /** `done` is called once the stream is through with `msg` (written, or never to be). */
  write(msg: Outbound, done?: (err?: Error | null) => void): boolean;
  once(event: "drain", listener: () => void): unknown;
  end(): unknown;
  emit(event: "error", err: { code: number; details: string }): unknown;
}

export interface AgentConnectionOptions {
  /** Builds the WorkUnit message (reads the payloads), possibly already encoded. */
  unitMessage: (unit: PlannedUnit, records: readonly RecordEntry[], backup: boolean) => Outbound;
  /** The stream can take more: the scheduler may hand out units again. */
  onWritable: () => void;
}

export class AgentConnection implements AgentLink {
  private blocked = false;
  private ended = false;
  private drained: "reconnect" | "stop" | undefined;
  /** Whether this connection was told to drain (the agent then stops, or reattaches later). */
  get toldToDrain(): boolean {
    return this.drained !== undefined;
  }
  private outbox: Outbound[] = [];

  constructor(
    /** Unique per connection. */
    readonly key: string,
    readonly agentId: string,
    /** The agent process (Hello.instance). */
    readonly instance: string,
    private readonly stream: OutboundStream,
    private readonly options: AgentConnectionOptions,
  ) {}

  writable(): boolean {
    return !this.blocked && !this.ended;
  }

  /** Writes now, or queues behind earlier messages while the stream is blocked. */
  send(msg: Outbound): void {
    if (this.ended) return;
    if (this.blocked) {
      this.outbox.push(msg);
      return;
    }
    // An encoded unit's buffer is reused once the stream is through with it.
    const written = msg instanceof EncodedUnit ? () => msg.written() : undefined;
    if (!this.stream.write(msg, written)) {
      this.blocked = true;
      this.stream.once("drain", () => {
        this.blocked = false;
        const queued = this.outbox;
        this.outbox = [];
        for (const m of queued) this.send(m);
        if (!this.blocked) this.options.onWritable();
      });
    }
  }

  sendUnit(unit: PlannedUnit, records: readonly RecordEntry[], backup: boolean): void {
    this.send(this.options.unitMessage(unit, records, backup));
  }

  sendCancel(unitId: string): void {
    this.send(cancelToWire(unitId));
  }

  /**
   * Drain is said once per connection; a Drain to reconnect (a restart) may be followed by one to
   * stop (the operator asked for the agents to drain after all).
   */
  sendDrain(reason: string, reconnect = false): void {
    if (this.drained === "stop" || (this.drained === "reconnect" && reconnect)) return;
    this.drained = reconnect ? "reconnect" : "stop";
    this.send(drainToWire(reason, reconnect));
  }

  /** Ends the stream: with OK, or with the given gRPC status. */
  end(status?: { code: number; details: string }): void {
    if (this.ended) return;
    this.ended = true;
    if (status) this.stream.emit("error", status);
    else this.stream.end();
  }
}
