// A one-line progress bar on a TTY (stderr): records committed, rate, ETA, tracks done.
// Off when stderr is not a TTY or UDM_NO_PROGRESS=1; then a plain line every `plainEveryMs`.
import { env } from "../common/env.js";
import type { RunStatus } from "../coordinator/index.js";

export interface ProgressSnapshot {
  committed: number;
  total: number;
  tracksDone: number;
  tracksTotal: number;
  /** Agents attached, and of them those whose engine answers (ready). */
  agents: number;
  agentsReady: number;
}

/** The progress line's figures from a coordinator's status: agents attached vs ready (their engine answers). */
export function progressOf(s: RunStatus): ProgressSnapshot {
  return {
    committed: s.recordsCommitted,
    total: s.recordsTotal,
    tracksDone: s.tracks.filter((t) => t.complete).length,
    tracksTotal: s.tracks.length,
    agents: s.agents.length,
    agentsReady: s.agents.filter((a) => a.ready).length,
  };
}

export interface ProgressBar {
  update(s: ProgressSnapshot): void;
  /** Prints a line above the bar (e.g. a track's metrics). */
  log(line: string): void;
  stop(): void;
}

export function createProgressBar(label: string, opts: { plainEveryMs?: number; stream?: NodeJS.WriteStream } = {}): ProgressBar {
  const stream = opts.stream ?? process.stderr;
  const tty = Boolean(stream.isTTY) && !env.noProgress();
  const plainEveryMs = opts.plainEveryMs ?? 10_000;
  const started = Date.now();
  let last: ProgressSnapshot | undefined;
  let lastPlain = 0;
  let timer: NodeJS.Timeout | undefined;

  const render = (): string => {
    if (!last) return "";
    const { committed, total, tracksDone, tracksTotal, agents, agentsReady } = last;
    const frac = total > 0 ? committed / total : 1;
    const width = Math.max(10, Math.min(40, (stream.columns ?? 100) - 80));
    const filled = Math.round(frac * width);
    const secs = (Date.now() - started) / 1000;
    const rate = secs > 0 ? committed / secs : 0;
    const eta = rate > 0 ? (total - committed) / rate : Infinity;
    return (
      `${label} [${"#".repeat(filled)}${"-".repeat(width - filled)}] ${(frac * 100).toFixed(1)}% ` +
      `${committed}/${total} rec | ${rate.toFixed(0)} rec/s | ETA ${formatSeconds(eta)} | tracks ${tracksDone}/${tracksTotal} | agents ${agentsReady}/${agents} ready`
    );
  };
  const draw = () => {
    if (tty) stream.write(`\r\x1b[2K${render()}`);
  };
  if (tty) timer = setInterval(draw, 200).unref();

  return {
    update(s) {
      last = s;
      if (!tty && Date.now() - lastPlain >= plainEveryMs) {
        lastPlain = Date.now();
        stream.write(render() + "\n");
      }
    },
    log(line) {
      if (tty) stream.write(`\r\x1b[2K${line}\n`);
      else stream.write(line + "\n");
      draw();
    },
    stop() {
      if (timer) clearInterval(timer);
      if (tty) stream.write(`\r\x1b[2K${render()}\n`);
    },
  };
}

export function formatSeconds(s: number): string {
  if (!Number.isFinite(s)) return "--";
  if (s < 60) return `${s.toFixed(0)}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(Math.floor(s % 60)).padStart(2, "0")}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, "0")}m`;
}
