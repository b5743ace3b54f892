// The live page's event feed: keeps the last events (replayed to a client that connects) and
// writes each new one to every open server-sent-events stream. Track headlines are kept for the
// whole run (one per track), so a page opened late still shows every score.
import type { ServerResponse } from "node:http";
import type { LiveEvent } from "./live-event.js";

export const DEFAULT_REPLAY = 200;

interface Kept {
  id: number;
  event: LiveEvent;
}

export class EventHub {
  private readonly recent: Kept[] = [];
  private readonly scores = new Map<string, Kept>();
  private readonly clients = new Set<ServerResponse>();
  private seq = 0;

  constructor(private readonly replay = DEFAULT_REPLAY) {}

  publish(event: LiveEvent): void {
    // A coordinator with its own scorer and a bus scorer announce the same headline: show it once.
    if (event.type === "track_scored" && sameScore(this.scores.get(event.track)?.event, event)) return;
    const kept = { id: ++this.seq, event };
    if (event.type === "track_scored") this.scores.set(event.track, kept);
    else {
      this.recent.push(kept);
      if (this.recent.length > this.replay) this.recent.shift();
    }
    const frame = sseFrame(kept);
    for (const res of this.clients) res.write(frame);
  }

  /** The kept events, oldest first. */
  events(): LiveEvent[] {
    return this.kept().map((k) => k.event);
  }

  /** Opens an SSE stream on `res`: the kept events after `lastEventId` first, then every new one. */
  attach(res: ServerResponse, lastEventId?: number): void {
    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    });
    res.write("retry: 2000\n\n");
    for (const k of this.kept()) if (lastEventId === undefined || k.id > lastEventId) res.write(sseFrame(k));
    this.clients.add(res);
    const ping = setInterval(() => res.write(": ping\n\n"), 15_000);
    ping.unref();
    res.on("close", () => {
      clearInterval(ping);
      this.clients.delete(res);
    });
  }

  /** Forgets the kept events and scores (the next run of a sweep begins); open streams stay. */
  reset(): void {
    this.recent.length = 0;
    this.scores.clear();
  }

  /** Ends every open stream (the server is closing). */
  close(): void {
    for (const res of this.clients) res.end();
    this.clients.clear();
  }

  get clientCount(): number {
    return this.clients.size;
  }

  private kept(): Kept[] {
    return [...this.recent, ...this.scores.values()].sort((a, b) => a.id - b.id);
  }
}

function sseFrame(k: Kept): string {
  return `id: ${k.id}\nevent: ${k.event.type}\ndata: ${JSON.stringify(k.event)}\n\n`;
}

function sameScore(a: LiveEvent | undefined, b: Extract<LiveEvent, { type: "track_scored" }>): boolean {
  return a?.type === "track_scored" && a.metric === b.metric && a.value === b.value && a.ci_low === b.ci_low && a.ci_high === b.ci_high;
}
