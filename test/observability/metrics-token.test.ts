// /metrics of the coordinator's page behind a token (issue 27, item 2): with a metrics token set,
// GET /metrics needs `Authorization: Bearer <token>` (the scheme in any case; an empty token, a
// prefix and a longer one refused); /healthz and /readyz stay open. Without one it stays open.
// The real server on 127.0.0.1:0.
import { afterEach, describe, expect, it } from "vitest";
import type { Logger } from "../../common/log.js";
import { createProcessRegistry } from "../../common/metrics/index.js";
import { startObservabilityServer, type ObservabilityServer } from "../../coordinator/index.js";

const servers: ObservabilityServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function page(options: { token?: string; metricsToken?: string; log?: Logger }): Promise<string> {
  const s = await startObservabilityServer({
    listen: { host: "127.0.0.1", port: 0 },
    registry: createProcessRegistry("coordinator"),
    run: { method: "systemone", model: "m", seeds: [], gpuHourUsd: 0 },
    ...options,
  });
  servers.push(s);
  return s.url;
}

const get = async (url: string, authorization?: string) => (await fetch(url, authorization !== undefined ? { headers: { authorization } } : {})).status;

describe("/metrics and the token", () => {
  it("needs the metrics token when one is set", async () => {
    const url = await page({ token: "s3cret", metricsToken: "m3trics" });
    expect(await get(`${url}/metrics`)).toBe(401);
    for (const ok of ["Bearer m3trics", "bearer m3trics", "BEARER m3trics"]) expect(await get(`${url}/metrics`, ok), ok).toBe(200);
    for (const bad of ["Bearer ", "Bearer m3tric", "Bearer m3tricss", "Bearer s3cret", "Basic m3trics", "m3trics"]) expect(await get(`${url}/metrics`, bad), bad).toBe(401);
    expect(await get(`${url}/metrics?token=m3trics`)).toBe(401);
    expect(await get(`${url}/healthz`)).toBe(200);
    expect(await get(`${url}/readyz`)).toBe(503);
  });

  it("/api takes the bearer scheme in any case and refuses an empty, shorter or longer token", async () => {
    const url = await page({ token: "s3cret" });
    for (const ok of ["Bearer s3cret", "bearer s3cret", "BEARER s3cret"]) expect(await get(`${url}/api/run`, ok), ok).toBe(200);
    for (const bad of ["Bearer ", "Bearer s3cre", "Bearer s3crett"]) expect(await get(`${url}/api/run`, bad), bad).toBe(401);
    expect(await get(`${url}/api/run?token=`)).toBe(401);
    // No metrics token: /metrics is open, as before.
    expect(await get(`${url}/metrics`)).toBe(200);
  });

  it("every route of the page with an empty bearer, a prefix, a longer token, the lowercase scheme and the right one", async () => {
    // As a sweep and the chart run it: /metrics behind the run's token too.
    const url = await page({ token: "s3cret", metricsToken: "s3cret" });
    const status = async (path: string, authorization?: string): Promise<number> => {
      const res = await fetch(`${url}${path}`, authorization !== undefined ? { headers: { authorization } } : {});
      await res.body?.cancel(); // /api/events streams until the client goes
      return res.status;
    };
    const cases: Array<[string | undefined, boolean]> = [
      [undefined, false],
      ["Bearer ", false],
      ["Bearer s3cre", false],
      ["Bearer s3crett", false],
      ["bearer s3cret", true],
      ["Bearer s3cret", true],
    ];
    for (const path of ["/api/status", "/api/events", "/api/run", "/metrics"]) {
      for (const [authorization, ok] of cases) expect(await status(path, authorization), `${path} ${authorization}`).toBe(ok ? 200 : 401);
    }
    // The page itself holds no run data (it asks /api with the token): open.
    for (const [authorization] of cases) expect(await status("/", authorization), `/ ${authorization}`).toBe(200);
  });

  it("/api takes ?token= (EventSource sends no header), answers 401 with a Bearer challenge, and is open without a token", async () => {
    const url = await page({ token: "s3cret" });
    expect(await get(`${url}/api/run?token=s3cret`)).toBe(200);
    expect(await get(`${url}/api/run?token=s3cre`)).toBe(401);
    const refused = await fetch(`${url}/api/status`, { headers: { authorization: "Bearer nope" } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toBe("Bearer");
    expect(refused.headers.get("content-type")).toBe("text/plain");
    expect(await refused.text()).toBe("missing or wrong token (--token): send Authorization: Bearer <token> or ?token=<token>\n");
    const metrics = await fetch(`${await page({ metricsToken: "m3trics" })}/metrics`, { headers: { authorization: "Bearer nope" } });
    expect([metrics.status, metrics.headers.get("www-authenticate"), metrics.headers.get("content-type")]).toEqual([401, "Bearer", "text/plain"]);
    expect(await metrics.text()).toBe("missing or wrong token (--metrics-token): send Authorization: Bearer <token>\n");
    const open = await page({});
    expect(await get(`${open}/api/run`)).toBe(200);
    expect(await get(`${open}/api/run`, "Bearer anything")).toBe(200);
  });

  it("a refused /api request ends at its 401: no later route answers it too", async () => {
    // A second answer on the same response fails (headers already sent), which the server logs.
    const failures: string[] = [];
    const log: Logger = { debug() {}, info() {}, warn: (m, f) => failures.push(`${m} ${JSON.stringify(f)}`), error: (m) => failures.push(m), child: () => log };
    const url = await page({ token: "s3cret", log });
    for (const path of ["/api/status", "/api/run", "/api/nothing"]) {
      const res = await fetch(`${url}${path}`);
      expect([res.status, await res.text()], path).toEqual([401, "missing or wrong token (--token): send Authorization: Bearer <token> or ?token=<token>\n"]);
    }
    // The server handles a request after its answer is sent: wait for one more answer first.
    expect(await get(`${url}/healthz`)).toBe(200);
    expect(failures).toEqual([]);
  });
});
