// Writes messages to a gRPC stream one at a time, honouring back-pressure: when write() returns
// false the next message waits for 'drain' (docs/design.md "Credit-based flow").
import type { Duplex } from "node:stream";

export class StreamWriter<T> {
  private tail: Promise<boolean> = Promise.resolve(true);
  private closed = false;
  private readonly closedSignal: Promise<void>;
  private markClosed!: () => void;

  constructor(private readonly stream: Duplex) {
    this.closedSignal = new Promise((resolve) => (this.markClosed = resolve));
    const close = () => this.close();
    stream.once("close", close);
    stream.once("error", close);
    stream.once("finish", close);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Queues a message; resolves true once the stream took it, false when the stream closed first. */
  send(message: T): Promise<boolean> {
    this.tail = this.tail.then(() => this.writeOne(message));
    return this.tail;
  }

  /** Half-closes the stream after every queued message was written. */
  async end(): Promise<void> {
    await this.tail;
    if (!this.closed) this.stream.end();
  }

  /** No more writes (the stream ended or failed). Pending waits for 'drain' give up. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.markClosed();
  }

  private async writeOne(message: T): Promise<boolean> {
    if (this.closed || this.stream.writableEnded || this.stream.destroyed) return false;
    if (this.stream.write(message)) return true;
    let onDrain!: () => void;
    const drained = new Promise<void>((resolve) => {
      onDrain = resolve;
      this.stream.once("drain", onDrain);
    });
    await Promise.race([drained, this.closedSignal]);
    this.stream.removeListener("drain", onDrain);
    // The message was accepted into the stream's buffer either way; it reaches the wire unless
    // the stream closed, in which case the coordinator requeues the unit.
    return !this.closed;
  }
}
