// The scorer of a coordinator's committed results (CommitScorer) in its own worker thread with a
// capped V8 heap. The coordinator's thread feeds it directly through a MessageChannel (the suite's
// gold, then every committed line), so none of it passes through the host's thread: the host's heap
// cannot be capped (in `udm-orch coordinator` it grew to several hundred MB holding the gold, measured
// with bench/coordinator-bench.ts), and the host serves the live page and /metrics, which should not
// wait behind scoring. Metrics.json is written by the thread; the host gets each track's metrics.
import { MessageChannel, type MessagePort } from "node:worker_threads";
import { UdmError } from "../common/errors.js";
import { ThreadHost, threadEntry } from "../common/threads/index.js";
import type { Interval } from "./bootstrap.js";
import type { HostToScorer, ScorerThreadStartData, ScorerToHost } from "./commit-scorer-messages.js";
import type { MetricsJson } from "./metrics-json.js";
import type { TrackMetrics } from "./track-metrics.js";

/** Default V8 old-generation cap of the scorer thread: the full suite's gold holds ~100 MB live. */
export const DEFAULT_SCORER_HEAP_MB = 256;

/** The worker entry when running from the build (dist/); undefined from sources (common/threads: threadEntry). */
export function scorerThreadEntry(): URL | undefined {
  return threadEntry("./commit-scorer-main.js", import.meta.url);
}

/** What the coordinator's thread needs to feed the scorer thread, and to end its run when scoring fails. */
export interface ScorerFeed {
  /** The sending end of the feed: transfer it to the coordinator's thread. */
  port: MessagePort;
  /** Settles with the scorer's error (metrics.json cannot be written, gold cannot be scored); never on success. */
  failure: Promise<Error>;
}

export type CommitScorerThreadOptions = Omit<ScorerThreadStartData, "feed"> & {
  /** Called with each track's final metrics and metrics.json as now written. */
  onTrackFinal?: (track: string, metrics: TrackMetrics, current: MetricsJson | undefined) => void;
  maxHeapMb?: number;
};

export class CommitScorerThread {
  readonly feed: ScorerFeed;
  /** Settles once every track's gold is in (rejects on gold that cannot be scored). */
  readonly loaded: Promise<void>;
  private readonly thread: ThreadHost<HostToScorer, ScorerToHost>;
  private lastMetrics: MetricsJson | undefined;
  private lastInterval: Interval | null = null;
  private error: Error | undefined;
  private readonly waiters = new Map<"replayed" | "finished", { resolve: (v: unknown) => void; reject: (e: Error) => void }>();

  constructor(options: CommitScorerThreadOptions, entry: URL) {
    const { onTrackFinal, maxHeapMb = DEFAULT_SCORER_HEAP_MB, ...rest } = options;
    const channel = new MessageChannel();
    const workerData: ScorerThreadStartData = { ...rest, feed: channel.port2 };
    let markLoaded!: () => void;
    let failLoad!: (e: Error) => void;
    this.loaded = new Promise<void>((res, rej) => {
      markLoaded = res;
      failLoad = rej;
    });
    this.loaded.catch(() => undefined);
    let reportFailure!: (e: Error) => void;
    const failure = new Promise<Error>((res) => (reportFailure = res));
    this.feed = { port: channel.port1, failure };
    const fail = (err: Error) => {
      if (this.error) return;
      this.error = err;
      failLoad(err);
      for (const w of this.waiters.values()) w.reject(err);
      this.waiters.clear();
      reportFailure(err);
    };
    this.thread = new ThreadHost<HostToScorer, ScorerToHost>(entry, {
      workerData,
      transferList: [channel.port2],
      maxHeapMb,
      fatalError: (msg) => (msg.type === "error" ? msg.error : undefined),
      onMessage: (msg) => {
        switch (msg.type) {
          case "loaded":
            markLoaded();
            break;
          case "replayed":
            this.lastMetrics = msg.current;
            this.lastInterval = msg.v1Interval;
            this.settle("replayed", undefined);
            break;
          case "trackFinal":
            this.lastMetrics = msg.current;
            this.lastInterval = msg.v1Interval;
            onTrackFinal?.(msg.track, msg.metrics, msg.current);
            break;
          case "finished":
            this.lastMetrics = msg.metrics;
            this.settle("finished", msg.metrics);
            break;
        }
      },
      onFailure: (f) => {
        if (f.kind === "threw") fail(f.error);
        else if (f.kind === "exited") fail(new UdmError(`the scorer thread exited with code ${f.code}`));
        else
          fail(
            new UdmError(
              f.outOfMemory
                ? `the scorer ran out of its ${maxHeapMb} MB heap (raise --scorer-max-heap-mb of udm-orch coordinator); committed results are safe, start again to resume`
                : `the scorer thread failed: ${f.error.message}`,
              { cause: f.error },
            ),
          );
      },
    });
  }

  /** Applies the results already in the out dir (once the coordinator has opened it), then the lines committed meanwhile. */
  replayCommitted(): Promise<void> {
    return this.ask("replayed", { type: "replay" }) as Promise<void>;
  }

  /** Once the coordinator's run is complete: scores what is left, writes metrics.json and returns it. */
  finish(): Promise<MetricsJson> {
    return this.ask("finished", { type: "finish" }) as Promise<MetricsJson>;
  }

  /** metrics.json as last written (the tracks scored so far). */
  current(): MetricsJson | undefined {
    return this.lastMetrics;
  }

  /** The interval of the v1 mean over the tracks scored so far; null before any. */
  v1Interval(): Interval | null {
    return this.lastInterval;
  }

  async close(): Promise<void> {
    this.error ??= new UdmError("the scorer thread was closed");
    this.feed.port.close();
    await this.thread.terminate();
  }

  private ask(answer: "replayed" | "finished", msg: HostToScorer): Promise<unknown> {
    if (this.error) return Promise.reject(this.error);
    return new Promise((resolve, reject) => {
      this.waiters.set(answer, { resolve, reject });
      this.thread.post(msg satisfies HostToScorer);
    });
  }

  private settle(answer: "replayed" | "finished", value: unknown): void {
    this.waiters.get(answer)?.resolve(value);
    this.waiters.delete(answer);
  }
}
