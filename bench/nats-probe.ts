// Whether a nats-server accepts clients on a port: its INFO line arrives on a fresh TCP
// connection. Used by the chaos cluster (bench) and by the tests' nats-server support.
import { createConnection } from "node:net";

export async function acceptsNatsClients(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = createConnection({ host: "127.0.0.1", port });
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(1000, () => done(false));
    sock.once("error", () => done(false));
    sock.once("data", (buf) => done(buf.toString("latin1").startsWith("INFO ")));
  });
}
