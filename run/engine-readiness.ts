// `run`'s start-up wait for its engines: an engine not ready within --engine-ready-timeout-ms is
// reported by URL with its last error; when none is ready the run fails (exit 1) instead of
// waiting at 0% forever. Meanwhile an engine that is not ready after REPORT_MS is named at once
// (refused, or silent on its model info) and again every REPORT_REPEAT_MS: the timeout may be
// minutes, an unreachable engine should not be silent that long.
import { UdmError } from "../common/errors.js";
import type { EngineMethod } from "../agent/index.js";
import { redactUrl } from "../common/redact-url.js";

const POLL_MS = 500;
const REPORT_MS = 5_000;
const REPORT_REPEAT_MS = 30_000;

export interface EngineReadiness {
  /** Resolves once any engine is ready; rejects with a UdmError naming every engine when none is within the time. */
  anyReady: Promise<void>;
  stop(): void;
}

export function watchEngineReadiness(
  engines: ReadonlyArray<{ url: string; method: Pick<EngineMethod, "info"> }>,
  timeoutMs: number,
  warn: (message: string) => void,
): EngineReadiness {
  const stopper = new AbortController();
  const deadline = Date.now() + timeoutMs;
  const lastError = new Map<string, string>();
  const waitOne = async (url: string, method: Pick<EngineMethod, "info">): Promise<boolean> => {
    let askedSince: number | undefined;
    const report = (): void => {
      if (stopper.signal.aborted || Date.now() >= deadline) return;
      const silentMs = askedSince !== undefined ? Date.now() - askedSince : 0;
      const why = silentMs >= 2_000 || !lastError.has(url) ? `no answer to its model info for ${Math.round(silentMs / 1000)} s` : lastError.get(url);
      warn(`engine ${url} unreachable or not ready (still waiting, up to ${timeoutMs} ms in all): ${why}`);
      reporter = setTimeout(report, REPORT_REPEAT_MS);
    };
    let reporter = setTimeout(report, Math.min(REPORT_MS, timeoutMs));
    try {
      return await poll(url, method, (since) => (askedSince = since));
    } finally {
      clearTimeout(reporter);
    }
  };
  const poll = async (url: string, method: Pick<EngineMethod, "info">, asking: (since: number | undefined) => void): Promise<boolean> => {
    for (;;) {
      if (stopper.signal.aborted) return false;
      try {
        const left = Math.max(1, deadline - Date.now());
        asking(Date.now());
        await method.info(AbortSignal.any([stopper.signal, AbortSignal.timeout(Math.min(left, 10_000))]));
        return true;
      } catch (err) {
        lastError.set(url, (err as Error).message);
      } finally {
        asking(undefined);
      }
      if (Date.now() >= deadline) {
        warn(redactUrl(`engine ${url} not ready after ${timeoutMs} ms: ${lastError.get(url) ?? "no answer"}`));
        return false;
      }
      await new Promise((r) => setTimeout(r, Math.min(POLL_MS, Math.max(0, deadline - Date.now()))));
    }
  };
  const anyReady = new Promise<void>((resolve, reject) => {
    let settled = 0;
    for (const { url, method } of engines) {
      void waitOne(url, method).then((ready) => {
        settled++;
        if (ready) resolve();
        else if (settled === engines.length && !stopper.signal.aborted) {
          reject(new UdmError(redactUrl(`no engine became ready within ${timeoutMs} ms (--engine-ready-timeout-ms): ${engines.map((e) => `${e.url}: ${lastError.get(e.url) ?? "no answer"}`).join("; ")}`)));
        }
      });
    }
  });
  anyReady.catch(() => undefined);
  return { anyReady, stop: () => stopper.abort() };
}
