// The run a scorer given `--run-name` scores: the one whose coordinator was given the same name
// (its bus status carries `runName`). A scorer started before that coordinator waits for it; runs
// of other names (an older run still on the bus) are never chosen, so no run is scored into
// another's --out.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Bus, RunStatusRecord } from "../common/bus/index.js";
import { UsageError } from "../common/errors.js";
import type { Logger } from "../common/log.js";

const POLL_MS = 500;

export interface NamedRunOptions {
  bus: Bus;
  name: string;
  /** The scorer's --out: a scorer-state.json there names the run it already scores (a restart keeps it). */
  stateRunId?: string;
  /** Give up after this long (a UsageError); absent: wait until stopped. */
  timeoutMs?: number;
  log?: Logger;
  /** Stops the wait (the scorer is shutting down). */
  signal?: AbortSignal;
}

/**
 * Waits until a run with this name is on the bus and returns its id. Several runs of one name (a
 * coordinator whose --out was emptied and started again): the one this scorer's state already
 * scores, else the most recently updated.
 */
export async function waitForNamedRun(o: NamedRunOptions): Promise<string> {
  const deadline = o.timeoutMs === undefined ? Infinity : Date.now() + o.timeoutMs;
  let said = false;
  let unreachable = false;
  for (;;) {
    if (o.signal?.aborted) throw new UsageError(`stopped while waiting for run ${JSON.stringify(o.name)} on the bus`);
    let statuses: RunStatusRecord[] = [];
    try {
      statuses = await o.bus.listStatuses();
    } catch (err) {
      // NATS restarting while the scorer waits: keep waiting, as through any outage.
      if (!unreachable) o.log?.warn("cannot read the runs on the bus; still waiting", { name: o.name, error: (err as Error).message });
      unreachable = true;
    }
    const named = statuses.filter((s) => runNameOf(s) === o.name);
    const chosen = pick(named, o.stateRunId);
    if (chosen) {
      if (said || named.length > 1) o.log?.info("named run found on the bus", { name: o.name, run: chosen.runId, state: chosen.state, same_name: named.length });
      return chosen.runId;
    }
    if (Date.now() >= deadline) {
      throw new UsageError(`no run named ${JSON.stringify(o.name)} appeared on the bus within ${o.timeoutMs} ms (--wait-run-ms): is its coordinator running with --nats and --run-name ${o.name}?`);
    }
    if (!said) {
      said = true;
      o.log?.info(`waiting for run ${JSON.stringify(o.name)} to appear on the bus (its coordinator, started with --run-name ${o.name}, puts it there)`, {
        name: o.name,
        ...(o.timeoutMs !== undefined ? { timeout_ms: o.timeoutMs } : {}),
      });
    }
    await new Promise((r) => setTimeout(r, Math.max(0, Math.min(POLL_MS, deadline - Date.now()))));
  }
}

function runNameOf(s: RunStatusRecord): string | undefined {
  const n = (s as { runName?: unknown }).runName;
  return typeof n === "string" ? n : undefined;
}

function pick(named: readonly RunStatusRecord[], stateRunId: string | undefined): RunStatusRecord | undefined {
  if (named.length === 0) return undefined;
  const own = stateRunId !== undefined ? named.find((s) => s.runId === stateRunId) : undefined;
  if (own) return own;
  return [...named].sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0))[0];
}

/** The run id a scorer's --out already scores (its scorer-state.json), if any. */
export function stateRunIdOf(outDir: string, stateFile: string): string | undefined {
  const path = join(outDir, stateFile);
  if (!existsSync(path)) return undefined;
  try {
    const { runId } = JSON.parse(readFileSync(path, "utf8")) as { runId?: unknown };
    return typeof runId === "string" ? runId : undefined;
  } catch {
    return undefined; // unreadable: StreamingScorer says so with its own error
  }
}
