// Memory and CPU of another process, read from /proc (Linux), for benchmarks that run the
// coordinator or agents as child processes.
import { readdirSync, readFileSync } from "node:fs";

export interface ProcSample {
  rssKb: number;
  /** Peak resident set size so far (VmHWM). */
  hwmKb: number;
  /** User + system CPU seconds. */
  cpuS: number;
}

const TICKS_PER_SECOND = 100;

export function sampleProcess(pid: number): ProcSample | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
    // Fields after the command name: utime and stime are the 12th and 13th (1-based), in ticks.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    return { rssKb: kb("VmRSS"), hwmKb: kb("VmHWM"), cpuS: ticks / TICKS_PER_SECOND };
  } catch {
    return undefined; // the process has exited
  }
}

/** User + system CPU seconds of each thread of a process, by thread id (empty once it has exited). */
export function sampleThreads(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.set(Number(tid), (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND);
    }
  } catch {
    // the process or a thread exited while being read
  }
  return out;
}

/** Samples a process every `everyMs` and keeps the last sample seen while it was alive. */
export class ProcessWatch {
  last: ProcSample | undefined;
  private readonly timer: NodeJS.Timeout;
  constructor(readonly pid: number, everyMs = 200) {
    this.timer = setInterval(() => {
      const s = sampleProcess(pid);
      if (s) this.last = s;
    }, everyMs);
  }
  stop(): ProcSample | undefined {
    clearInterval(this.timer);
    const s = sampleProcess(this.pid);
    if (s) this.last = s;
    return this.last;
  }
}
