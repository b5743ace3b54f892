// Command-line helpers every benchmark uses.
import { createServer } from "node:net";

/** The value after `--name`, or undefined. */
export function optionalArg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? process.argv[i + 1] : undefined;
  return v && !v.startsWith("--") ? v : undefined;
}

/** The value after `--name`, else `fallback`; without either it is an error. */
export function arg(name: string, fallback?: string): string {
  const v = optionalArg(name) ?? fallback;
  if (v === undefined) throw new Error(`--${name} is required`);
  return v;
}

/** A port free right now on 127.0.0.1, for a server that must be told its port in advance. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const a = srv.address();
      srv.close(() => resolve(typeof a === "object" && a ? a.port : 0));
    });
  });
}
