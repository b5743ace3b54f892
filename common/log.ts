// Line-oriented logger on stderr; stdout is kept for command output.
import { env, type LogLevel } from "./env.js";
import { printableLines } from "./printable.js";
import { redactUrl } from "./redact-url.js";

const LEVELS: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };
export type { LogLevel };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(prefix: string): Logger;
}

export function createLogger(prefix = "udm-orch", level: LogLevel = env.logLevel()): Logger {
  const min = LEVELS[level];
  const write = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (LEVELS[lvl] < min) return;
    const extra = fields && Object.keys(fields).length ? " " + JSON.stringify(fields) : "";
    // A URL with credentials (an engine's, a quoted one in an error) is never logged as is, and
    // remote text in a message (an agent id, an engine's error) cannot drive the terminal.
    process.stderr.write(redactUrl(`${new Date().toISOString()} ${lvl.padEnd(5)} [${prefix}] ${printableLines(msg)}${extra}\n`));
  };
  return {
    debug: (m, f) => write("debug", m, f),
    info: (m, f) => write("info", m, f),
    warn: (m, f) => write("warn", m, f),
    error: (m, f) => write("error", m, f),
    child: (p) => createLogger(`${prefix}/${p}`, level),
  };
}
