// `udm-orch view RUN_DIR`: one HTTP server on the run's files. GET / is the page (view-page.ts,
// self-contained); its API reads run.json, metrics.json and run-card.json once, and each track's
// index (track-index.ts) the first time the track is opened. With a token, /api/* needs
// `Authorization: Bearer <token>` or `?token=<token>`, as the live page's API does.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { bearerTokenOf, tokenMatches } from "../common/bearer-token.js";
import { UsageError } from "../common/errors.js";
import { limitHttpServer } from "../common/http-limits.js";
import type { ListenAddress } from "../common/metrics/index.js";
import type { RunDir } from "./run-dir.js";
import { trackResultFiles } from "./run-dir.js";
import { recordPage, suiteRecordAt } from "./record-page.js";
import { STATUS, TrackIndex, type ReadStats, type StatusName } from "./track-index.js";
import { VIEW_PAGE_HTML } from "./view-page.js";

export interface ViewServerOptions {
  run: RunDir;
  listen: ListenAddress;
  /** Bearer token the API needs. @default none */
  token?: string;
  /** Records in a page when the page asks for no number. @default 50 */
  pageSize?: number;
  /** Most records a page may ask for. @default 500 */
  maxPageSize?: number;
}

export const VIEW_DEFAULTS = { pageSize: 50, maxPageSize: 500 } as const satisfies Partial<ViewServerOptions>;

/** Where `udm-orch view` serves unless told (`diff` links to it). */
export const VIEW_DEFAULT_LISTEN = "127.0.0.1:9480";

export interface ViewServer {
  url: string;
  /** What has been read of results files so far (the index passes, and the record pages). */
  readonly stats: ReadStats;
  close(): Promise<void>;
}

export async function startViewServer(options: ViewServerOptions): Promise<ViewServer> {
  const { run, pageSize = VIEW_DEFAULTS.pageSize, maxPageSize = VIEW_DEFAULTS.maxPageSize } = options;
  const stats: ReadStats = { indexBytes: 0, maxIndexBuffer: 0, pageBytes: 0, pageLines: 0 };
  const indexes = new Map<string, Promise<TrackIndex>>();
  const files = new Map(run.scope.map((f) => [f.track, f]));
  const indexOf = (track: string): Promise<TrackIndex> | undefined => {
    const file = files.get(track);
    if (!file) return undefined;
    let p = indexes.get(track);
    if (!p) {
      p = TrackIndex.build(run.suite, file, trackResultFiles(run.dir, file), run.limit, stats);
      p.catch(() => indexes.delete(track));
      indexes.set(track, p);
    }
    return p;
  };
  const expected = options.token !== undefined ? Buffer.from(options.token) : undefined;
  const json = (res: ServerResponse, status: number, body: unknown): void => {
    res.writeHead(status, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" }).end(JSON.stringify(body) + "\n");
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain" }).end("method not allowed\n");
      return;
    }
    const url = new URL(req.url ?? "/", "http://localhost");
    if (url.pathname === "/" || url.pathname === "/index.html") {
      res.writeHead(200, {
        "content-type": "text/html; charset=utf-8",
        "cache-control": "no-store",
        // Everything the page needs is in it; it may talk to this origin only.
        "content-security-policy": "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; connect-src 'self'",
      });
      res.end(req.method === "HEAD" ? undefined : VIEW_PAGE_HTML);
      return;
    }
    if (url.pathname === "/healthz") {
      res.writeHead(200, { "content-type": "text/plain" }).end("ok\n");
      return;
    }
    if (!url.pathname.startsWith("/api/")) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
      return;
    }
    if (expected && !tokenMatches(bearerTokenOf(req.headers.authorization) ?? url.searchParams.get("token") ?? undefined, expected)) {
      res.writeHead(401, { "content-type": "text/plain", "www-authenticate": "Bearer" }).end("missing or wrong token (--token): send Authorization: Bearer <token> or ?token=<token>\n");
      return;
    }
    const parts = url.pathname.slice("/api/".length).split("/").map(decodeURIComponent);
    if (parts[0] === "run" && parts.length === 1) return json(res, 200, runInfo(run));
    if (parts[0] === "tracks" && parts.length === 1) return json(res, 200, tracksTable(run));
    if (parts[0] !== "tracks" || parts.length < 3) return json(res, 404, { error: `no such API route: ${url.pathname}` });
    const pending = indexOf(parts[1]!);
    if (!pending) return json(res, 404, { error: `no track ${JSON.stringify(parts[1])} in this run` });
    const index = await pending;
    if (parts[2] === "records" && parts.length === 3) return json(res, 200, recordList(index, url.searchParams, pageSize, maxPageSize));
    if (parts[2] === "confusion" && parts.length === 3) return json(res, 200, confusion(index));
    if (parts[2] === "records" && parts.length === 4) {
      const i = index.indexOf(parts[3]!);
      if (i === undefined) return json(res, 404, { error: `no record ${JSON.stringify(parts[3])} in track ${index.file.track}${run.limit !== undefined ? ` (limited to ${run.limit} records)` : ""}` });
      const record = await suiteRecordAt(index, index.suiteLines[i]!);
      if (!record || record.id !== index.ids[i]) return json(res, 404, { error: `record ${parts[3]} is no longer at line ${index.suiteLines[i]} of ${index.file.path}: the suite changed` });
      const result = await index.resultLine(i, stats);
      return json(res, 200, { ...recordPage(index, i, record, result, url.searchParams.get("full") === "1"), method: run.run.method });
    }
    return json(res, 404, { error: `no such API route: ${url.pathname}` });
  }

  const server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(err instanceof UsageError ? 400 : 500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: (err as Error).message }) + "\n");
    });
  });
  limitHttpServer(server);
  await new Promise<void>((resolve, reject) => {
    server.once("error", (err) => reject(new UsageError(`--listen: cannot listen on ${options.listen.host}:${options.listen.port}: ${err.message}`, { cause: err })));
    server.listen(options.listen.port, options.listen.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = options.listen.host === "0.0.0.0" || options.listen.host === "::" ? "127.0.0.1" : options.listen.host;
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    stats,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function runInfo(run: RunDir): unknown {
  const card = run.card;
  return {
    run_id: run.run.run_id,
    dir: run.dir,
    suite: { root: run.suite.root, identity: run.run.suite_identity },
    method: run.run.method,
    model: card?.method.model_slug || run.run.method.model || "",
    limit: run.limit ?? null,
    tracks: run.scope.length,
    status: card?.status ?? null,
    summary: run.metrics?.summary ?? null,
    v1_ci: card?.scores.v1_ci ?? null,
  };
}

function tracksTable(run: RunDir): unknown {
  return run.scope.map((f) => {
    const m = run.metrics?.tracks[f.track];
    return { track: f.track, family: f.family, records: m?.records ?? null, groups: m?.groups ?? null, missing: m?.missing ?? null, headline: m?.headline ?? null };
  });
}

const STATUS_FILTERS = new Set<string>(Object.keys(STATUS));

function recordList(index: TrackIndex, q: URLSearchParams, pageSize: number, maxPageSize: number): unknown {
  const status = q.get("status") || "all";
  if (status !== "all" && !STATUS_FILTERS.has(status)) throw new UsageError(`status must be all or one of ${[...STATUS_FILTERS].join(", ")}`);
  const bit = status === "all" ? 0 : STATUS[status as StatusName];
  const gold = q.get("gold") || undefined;
  const pred = q.get("pred") || undefined;
  const search = (q.get("q") || "").toLowerCase();
  const offset = Math.max(0, Number(q.get("offset")) || 0);
  const size = Math.min(maxPageSize, Math.max(1, Number(q.get("limit")) || pageSize));
  const page: unknown[] = [];
  let matched = 0;
  for (let i = 0; i < index.size; i++) {
    if (bit && (index.status[i]! & bit) === 0) continue;
    if (gold !== undefined && index.label(index.gold[i]!) !== gold) continue;
    if (pred !== undefined && index.label(index.pred[i]!) !== pred) continue;
    if (search && !index.ids[i]!.toLowerCase().includes(search)) continue;
    if (matched >= offset && page.length < size) page.push({ id: index.ids[i], status: index.statusNames(i), gold: index.label(index.gold[i]!), predicted: index.label(index.pred[i]!), answered: index.fileOf[i]! >= 0 });
    matched++;
  }
  return { track: index.file.track, kind: index.kind, headline_key: index.headlineKey ?? null, total: index.size, matched, offset, limit: size, labels: index.labels, records: page };
}

function confusion(index: TrackIndex): unknown {
  if (index.kind === "retrieval" || index.kind === "none") return { track: index.file.track, kind: index.kind, labels: [], counts: [], missing: [] };
  const n = index.labels.length;
  const counts = Array.from({ length: n }, () => new Array<number>(n).fill(0));
  const missing = new Array<number>(n).fill(0);
  for (let i = 0; i < index.size; i++) {
    const g = index.gold[i]!;
    if (g < 0) continue;
    const p = index.pred[i]!;
    if (p < 0) missing[g]!++;
    else counts[g]![p]!++;
  }
  return { track: index.file.track, kind: index.kind, headline_key: index.headlineKey ?? null, labels: index.labels, counts, missing };
}
