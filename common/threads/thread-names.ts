// Which OS thread is which: with UDM_THREAD_LOG set, each of our worker threads appends
// "<tid> <name>" to that file as it starts, so a benchmark reading /proc/<pid>/task can name the
// threads whose CPU it measures (every JavaScript thread's comm is "node"). Unset: nothing is done.
import { appendFileSync, readlinkSync } from "node:fs";

export const THREAD_LOG_ENV = "UDM_THREAD_LOG";

export function announceThread(name: string): void {
  const file = process.env[THREAD_LOG_ENV];
  if (!file) return;
  try {
    // "/proc/thread-self" links to "<pid>/task/<tid>" (Linux).
    const tid = readlinkSync("/proc/thread-self").split("/").pop();
    appendFileSync(file, `${tid} ${name}\n`);
  } catch {
    // Not Linux, or the file cannot be written: the threads stay unnamed.
  }
}
