// A port for a server that is bound, closed and bound again at the same number over a test (a
// sweep's coordinator for each run, an engine restarted for each model), or bound long after the
// test chose it. Taken below the kernel's ephemeral range: a port from there (freePort's, port 0)
// can be handed to any process's port-0 listener or outgoing connection while it is unbound, and
// the next bind fails (EADDRINUSE); below the range only an explicit bind can take it.
import { readFileSync } from "node:fs";
import { createServer } from "node:net";

/** The kernel's ephemeral range (Linux's default when it cannot be read). */
function ephemeralRange(): [number, number] {
  try {
    const [lo, hi] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);
    if (Number.isInteger(lo) && Number.isInteger(hi)) return [lo!, hi!];
  } catch {
    // not Linux: its default
  }
  return [32768, 60999];
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once("error", () => resolve(false));
    srv.listen(port, "127.0.0.1", () => srv.close(() => resolve(true)));
  });
}

/** A free port on 127.0.0.1 outside the ephemeral range (10000 up to the range's start, or above its end). */
export async function fixedPort(): Promise<number> {
  const [lo, hi] = ephemeralRange();
  const below = Math.max(0, lo - 10_000);
  const above = Math.max(0, 65_535 - hi);
  for (let i = 0; i < 200; i++) {
    const r = Math.floor(Math.random() * (below + above));
    const port = r < below ? 10_000 + r : hi + 1 + (r - below);
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port outside the ephemeral range ${lo}-${hi}`);
}
