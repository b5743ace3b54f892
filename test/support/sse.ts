// Reads a server-sent-events stream (the live page's /api/events) the way a browser's EventSource does.

export interface SseEvent {
  type: string;
  data: unknown;
}

/**
 * Reads events from `url` until `until` returns true for one; resolves with every event read, that
 * one last. Rejects when the stream ends first or after timeoutMs. `onOpen` runs once the server
 * has answered (the stream is attached: nothing published from then on is missed).
 */
export async function readEventsUntil(
  url: string,
  until: (type: string, data: unknown) => boolean,
  timeoutMs: number,
  onOpen?: () => void,
): Promise<SseEvent[]> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), timeoutMs);
  const seen: SseEvent[] = [];
  try {
    const res = await fetch(url, { signal: ac.signal });
    if (!res.headers.get("content-type")?.startsWith("text/event-stream")) throw new Error(`${url}: not an event stream (${res.status} ${res.headers.get("content-type")})`);
    onOpen?.();
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`event stream ended after ${seen.length} events`);
      buf += decoder.decode(value, { stream: true });
      let i: number;
      while ((i = buf.indexOf("\n\n")) >= 0) {
        const frame = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const type = /^event: (.+)$/m.exec(frame)?.[1];
        const data = /^data: (.+)$/m.exec(frame)?.[1];
        if (!type || !data) continue;
        const event = { type, data: JSON.parse(data) as unknown };
        seen.push(event);
        if (until(type, event.data)) {
          ac.abort();
          return seen;
        }
      }
    }
  } finally {
    clearTimeout(timer);
  }
}
