// Every environment variable the project reads, in one place. CLI flags map to UDM_<FLAG>
// (cli/options.ts); the variables below are the ones that have no flag.
export const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const env = {
  /** UDM_LOG_LEVEL: debug|info|warn|error|silent (default info). */
  logLevel: (): LogLevel => {
    const v = process.env.UDM_LOG_LEVEL;
    return (LOG_LEVELS as readonly string[]).includes(v ?? "") ? (v as LogLevel) : "info";
  },
  /** UDM_NO_PROGRESS=1 disables progress bars even on a TTY. */
  noProgress: (): boolean => process.env.UDM_NO_PROGRESS === "1",
};

/** The environment variable of a CLI flag: `--gpu-hour-usd` -> `UDM_GPU_HOUR_USD`. */
export function flagEnvName(longFlag: string): string {
  return "UDM_" + longFlag.replace(/^--/, "").replace(/-/g, "_").toUpperCase();
}
