// NatsBus against a real nats-server (Debian's 2.9.10 in CI): the shared Bus contract, then what
// only a real server shows: restarts, reconnects, auth.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BusError, catchUpResults, type Bus } from "../../../common/bus/bus.js";
import type { ResultLine } from "../../../common/results/format.js";
import { ensureStream, NatsBus, reconnectDelayMs, type NatsBusOptions } from "../../../common/bus/nats.js";
import { ResultRejectedError } from "../../../common/bus/results-mac.js";
import { jetstreamManager, JetStreamApiError } from "@nats-io/jetstream";
import { connect, nanos } from "@nats-io/transport-node";
import { createLogger } from "../../../common/log.js";
import { openBus } from "../../../cli/open-bus.js";
import { acksOnServer, consumerCreated, natsTestMode, NATS_MISSING_MESSAGE, startNatsServer, type RunningNatsServer } from "../../support/nats-server.js";
import { makeTestCerts, skipWithoutOpenssl } from "../../support/test-certs.js";
import { describeBusContract, line, newRunId, sleep, waitFor } from "./bus-contract.js";

const mode = natsTestMode();

describe("reconnectDelayMs", () => {
  it.each([
    [0, 0, 250],
    [0, 1, 300],
    [2_000, 0, 500],
    [10_000, 0, 2500],
    [60_000, 0, 5000],
    [3_600_000, 1, 6000],
  ])("after an outage of %i ms (jitter %f): %i ms", (outage, jitter, expected) => {
    expect(reconnectDelayMs(outage, () => jitter)).toBe(expected);
  });
});
const quiet = createLogger("bus", "error");

if (mode === "fail") {
  describe("nats-server", () => {
    it("is installed (CI=true runs every NATS test)", () => {
      throw new Error(NATS_MISSING_MESSAGE.replace("NATS tests skipped", "CI=true needs it"));
    });
  });
}

describe.skipIf(mode !== "run")("NatsBus", () => {
  describeBusContract("NatsBus", async () => {
    const server = await startNatsServer({ jetstream: true });
    const options: NatsBusOptions = { servers: [server.url], logger: quiet };
    return {
      open: () => NatsBus.connect(options),
      openIsolated: () => NatsBus.connect(options),
      crash: async (bus) => bus.close(),
      acked: (runId, durable, count) => acksOnServer(server.url, `${runId}_${durable}`, count),
      teardown: () => server.stop(),
    };
  });

  describe("with a server restart", () => {
    let server: RunningNatsServer;
    beforeAll(async () => {
      server = await startNatsServer({ jetstream: true });
    });
    afterAll(async () => {
      await server?.stop();
    });

    it.each(["SIGTERM"] as const)("loses no result JetStream acknowledged across a restart (%s); the failed ones catch up once each", async (signal) => {
      const bus = await NatsBus.connect({ servers: [server.url], logger: quiet, publishTimeoutMs: 2000 });
      const states: string[] = [];
      bus.onStateChange((s) => states.push(s));
      const run = newRunId();
      const acked: string[] = [];
      const failed: ResultLine[] = [];
      let phase = "before" as "before" | "down" | "after";
      let failedWhileDown = 0;
      let ackedAfter = 0;
      let stop = false;
      let n = 0;
      const publisher = (async () => {
        for (; !stop && n < 20_000; n++) {
          const l = line("vihsd", n);
          const at = phase;
          const out = await bus.publishResult(run, "vihsd", l);
          if (out.ok) {
            acked.push(l.run_id);
            if (at === "after") ackedAfter++;
          } else {
            failed.push(l);
            if (at === "down") failedWhileDown++;
            await sleep(5); // fails fast while disconnected: give the client's I/O a turn
          }
        }
      })();
      await waitFor("100 published", () => n >= 100);
      await server.halt(signal); // while the publisher keeps going
      phase = "down";
      await waitFor("20 failures while the server is down", () => failedWhileDown >= 20);
      await server.start();
      phase = "after";
      await waitFor("100 acked after the restart", () => ackedAfter >= 100, 60_000);
      stop = true;
      await publisher;
      expect(states).toContain("disconnected");
      expect(bus.state).toBe("connected");

      const report = await catchUpResults(bus, run, failed.map((l) => ({ track: "vihsd", line: l })));
      expect(report.failed).toBe(0);
      expect(report.published + report.duplicates).toBe(failed.length);

      const got = new Map<string, number>();
      const reader = await NatsBus.connect({ servers: [server.url], logger: quiet });
      const consumer = await reader.consumeResults(run, { durable: "scorer", onResult: (l, ack) => (got.set(l.run_id, (got.get(l.run_id) ?? 0) + 1), ack()) });
      await waitFor(`${n} results`, () => got.size >= n, 60_000);
      await sleep(300); // nothing more may come: a line stored twice would be delivered again
      const lost = acked.filter((id) => got.get(id) !== 1);
      expect(lost).toEqual([]);
      expect(got.size).toBe(n);
      expect([...got.values()].every((c) => c === 1)).toBe(true);
      await consumer.stop();
      await reader.close();
      await bus.close();
    });

    it("keeps a durable consumer's place and status across a restart", async () => {
      const bus = await NatsBus.connect({ servers: [server.url], logger: quiet });
      const run = newRunId();
      const name = `${run}_scorer`;
      for (let i = 0; i < 4; i++) await bus.publishResult(run, "vihsd", line("vihsd", i));
      await bus.putStatus(run, { runId: run, state: "running", updatedAt: "2026-01-01T00:00:00Z" });
      const got: string[] = [];
      const firstDeliveries = new Map<string, number>();
      const consumer = await bus.consumeResults(run, {
        durable: "scorer",
        onResult: (l, ack, d) => (got.push(l.run_id), firstDeliveries.has(l.run_id) || firstDeliveries.set(l.run_id, d.deliveryCount), ack()),
      });
      await waitFor("4 results", () => got.length >= 4);
      await acksOnServer(server.url, name, 4);
      const restartedAt = Date.now();
      await server.restart();
      await waitFor("reconnect", () => bus.state === "connected");
      let out = await bus.publishResult(run, "vihsd", line("vihsd", 4));
      for (let i = 0; !out.ok && i < 100; i++) {
        await sleep(100); // JetStream may still be recovering right after the reconnect
        out = await bus.publishResult(run, "vihsd", line("vihsd", 4));
      }
      expect(out.ok).toBe(true);
      await waitFor("the 5th result after the restart", () => got.includes("vihsd:q4"));
      await sleep(300); // nothing more may come: q4 once
      // The same durable goes on after the restart: not made again (which would start over from q0).
      // (The server reads its creation time back from the store a few microseconds off.)
      expect(Date.parse(await consumerCreated(server.url, name))).toBeLessThan(restartedAt);
      expect(got.slice(0, 4)).toEqual([0, 1, 2, 3].map((i) => `vihsd:q${i}`));
      expect(got.filter((r) => r === "vihsd:q4")).toHaveLength(1);
      expect(firstDeliveries.get("vihsd:q4")).toBe(1);
      // q0..q3 may come again: nats-server 2.9.10 sometimes loses a consumer's last acks in a restart
      // (seen beside four CPU burners, after the ack floor was confirmed and with a graceful stop).
      // JetStream is at-least-once; the streaming scorer skips a run_id it has applied.
      expect(new Set(got)).toEqual(new Set([0, 1, 2, 3, 4].map((i) => `vihsd:q${i}`)));
      expect(await bus.getStatus(run)).toMatchObject({ state: "running" });
      await consumer.stop();
      await bus.close();
    });
  });

  describe("auth", () => {
    it("connects with the server's token and is refused with a wrong one", async () => {
      const server = await startNatsServer({ jetstream: true, auth: { token: "s3cret" } });
      try {
        const bus = await NatsBus.connect({ servers: [server.url], token: "s3cret", logger: quiet });
        await roundTrip(bus);
        await bus.close();
        await expect(NatsBus.connect({ servers: [server.url], token: "wrong", logger: quiet })).rejects.toThrow(BusError);
        await expect(NatsBus.connect({ servers: [server.url], logger: quiet })).rejects.toThrow(/cannot connect to NATS.*(authoriz|Authoriz)/);
      } finally {
        await server.stop();
      }
    });

    it("connects with the server's user and password and is refused with a wrong password", async () => {
      const server = await startNatsServer({ jetstream: true, auth: { user: "udm", pass: "pa55" } });
      try {
        const bus = await NatsBus.connect({ servers: [server.url], user: "udm", pass: "pa55", logger: quiet });
        await roundTrip(bus);
        await bus.close();
        await expect(NatsBus.connect({ servers: [server.url], user: "udm", pass: "nope", logger: quiet })).rejects.toThrow(/cannot connect to NATS.*(authoriz|Authoriz)/);
      } finally {
        await server.stop();
      }
    });
  });

  it("with a results token: signs each result; a consumer with the token gets only those, one with another token rejects them, one without accepts all", async () => {
    const server = await startNatsServer({ jetstream: true });
    const open = (resultsToken?: string) => NatsBus.connect({ servers: [server.url], logger: quiet, ...(resultsToken ? { resultsToken } : {}) });
    const [signer, plain, right, wrong, none] = await Promise.all([open("tok"), open(), open("tok"), open("other"), open()]);
    try {
      const run = newRunId();
      // A forger without the token publishes first under the records' predictable ids (run/record):
      // the signed lines that follow are not dropped as duplicates (their ids end in their MAC).
      for (let n = 0; n < 3; n++) expect((await plain.publishResult(run, "vihsd", line("vihsd", n))).ok).toBe(true);
      for (let n = 0; n < 3; n++) expect(await signer.publishResult(run, "vihsd", line("vihsd", n))).toMatchObject({ ok: true, duplicate: false });
      // The same signed line again is still a re-publish.
      expect(await signer.publishResult(run, "vihsd", line("vihsd", 2))).toMatchObject({ ok: true, duplicate: true });
      for (let n = 3; n < 5; n++) expect((await plain.publishResult(run, "vihsd", line("vihsd", n))).ok).toBe(true);
      const seen = async (bus: NatsBus, durable: string) => {
        const got: string[] = [];
        const rejected: string[] = [];
        const c = await bus.consumeResults(run, {
          durable,
          onResult: (l, ack) => {
            got.push(l.run_id);
            ack();
          },
          onError: (err) => rejected.push(err instanceof ResultRejectedError ? err.reason : `other: ${err.message}`),
        });
        await waitFor("8 deliveries", () => got.length + rejected.length >= 8);
        await c.stop();
        return { got, rejected };
      };
      expect(await seen(right, "right")).toEqual({ got: ["vihsd:q0", "vihsd:q1", "vihsd:q2"], rejected: ["unsigned", "unsigned", "unsigned", "unsigned", "unsigned"] });
      expect(await seen(wrong, "wrong")).toEqual({ got: [], rejected: ["unsigned", "unsigned", "unsigned", "bad-mac", "bad-mac", "bad-mac", "unsigned", "unsigned"] });
      expect((await seen(none, "none")).got).toEqual(["vihsd:q0", "vihsd:q1", "vihsd:q2", "vihsd:q0", "vihsd:q1", "vihsd:q2", "vihsd:q3", "vihsd:q4"]);
    } finally {
      await Promise.all([signer, plain, right, wrong, none].map((b) => b.close()));
      await server.stop();
    }
  });

  describe.skipIf(skipWithoutOpenssl())("TLS (certificates made with openssl)", () => {
    it("connects over mutual TLS with the CA, a client certificate and key; refused without them", async () => {
      const certs = makeTestCerts();
      const server = await startNatsServer({ jetstream: true, tls: { certFile: certs.serverCert, keyFile: certs.serverKey, verifyClientsCa: certs.caFile } });
      try {
        const bus = await NatsBus.connect({ servers: [server.url], tls: { caFile: certs.caFile, certFile: certs.clientCert, keyFile: certs.clientKey }, logger: quiet });
        await roundTrip(bus);
        await bus.close();
        // No client certificate: the server refuses the handshake.
        await expect(NatsBus.connect({ servers: [server.url], tls: { caFile: certs.caFile }, connectTimeoutMs: 3000, logger: quiet })).rejects.toThrow(BusError);
        // No CA: the client cannot verify the server.
        await expect(NatsBus.connect({ servers: [server.url], tls: { certFile: certs.clientCert, keyFile: certs.clientKey }, logger: quiet })).rejects.toThrow(BusError);
      } finally {
        await server.stop();
        certs.remove();
      }
    });
  });

  it("sets up file-backed streams, the duplicate window and the status bucket; a later connect updates the window", async () => {
    const server = await startNatsServer({ jetstream: true });
    const nc = await connect({ servers: server.url });
    try {
      const bus = await NatsBus.connect({ servers: [server.url], logger: quiet });
      const jsm = await jetstreamManager(nc);
      const results = await jsm.streams.info("UDM_RESULTS");
      expect(results.config).toMatchObject({ subjects: ["udm.*.results.>"], storage: "file", retention: "limits", duplicate_window: 600e9, max_age: 7 * 24 * 3600e9 });
      expect((await jsm.streams.info("UDM_METRICS")).config).toMatchObject({ subjects: ["udm.*.metrics.>"], storage: "file", max_msgs_per_subject: 16 });
      expect((await jsm.streams.info("UDM_EVENTS")).config).toMatchObject({ subjects: ["udm.*.events"], storage: "file" });
      expect((await jsm.streams.info("KV_udm_runs")).config).toMatchObject({ storage: "file", max_msgs_per_subject: 1 });
      await bus.close();
      const again = await NatsBus.connect({ servers: [server.url], duplicateWindowMs: 180_000, logger: quiet });
      expect((await jsm.streams.info("UDM_RESULTS")).config.duplicate_window).toBe(180e9);
      await again.close();
    } finally {
      await nc.close();
      await server.stop();
    }
  });

  it("fails to connect with a clear error when nothing listens", async () => {
    const server = await startNatsServer({ jetstream: true });
    const url = server.url;
    await server.stop();
    await expect(NatsBus.connect({ servers: [url], logger: quiet })).rejects.toThrow(new RegExp(`cannot connect to NATS at ${url}`));
  });

  it("fails with a clear error when the server has no JetStream", async () => {
    const server = await startNatsServer({ jetstream: false });
    try {
      await expect(NatsBus.connect({ servers: [server.url], logger: quiet })).rejects.toThrow(/-js/);
    } finally {
      await server.stop();
    }
  });
});

async function roundTrip(bus: Bus): Promise<void> {
  const run = newRunId();
  expect(await bus.publishResult(run, "vihsd", line("vihsd", 0))).toMatchObject({ ok: true });
  await bus.putStatus(run, { runId: run, state: "starting", updatedAt: "2026-01-01T00:00:00Z" });
  expect(await bus.getStatus(run)).toMatchObject({ state: "starting" });
  const got: string[] = [];
  const c = await bus.consumeResults(run, { durable: "s", onResult: (l, ack) => (got.push(l.run_id), ack()) });
  await waitFor("the result", () => got.length >= 1);
  await c.stop();
}

describe.skipIf(mode !== "run")("openBus", () => {
  it("opens the in-process bus without --nats and NatsBus with it", async () => {
    const local = await openBus({});
    expect(local.kind).toBe("in-process");
    await local.close();
    const server = await startNatsServer({ jetstream: true, auth: { token: "t" } });
    try {
      const bus = await openBus({ nats: server.url, natsToken: "t" }, quiet);
      expect(bus.kind).toBe("nats");
      await roundTrip(bus);
      await bus.close();
    } finally {
      await server.stop();
    }
  });

  describe("streams made by clients that connect at once", () => {
    let server: RunningNatsServer;
    beforeAll(async () => {
      server = await startNatsServer({ jetstream: true });
    });
    afterAll(async () => {
      await server?.stop();
    });

    /** The server's own stream manager, whose first look-up of `name` finds nothing (another client adds it meanwhile). */
    async function racedManager(name: string) {
      const nc = await connect({ servers: server.url });
      const jsm = await jetstreamManager(nc);
      let missed = false;
      const streams = new Proxy(jsm.streams, {
        get(target, prop, receiver) {
          if (prop === "info")
            return async (n: string) => {
              if (n === name && !missed) {
                missed = true;
                throw new JetStreamApiError({ code: 404, err_code: 10059, description: "stream not found" });
              }
              return target.info(n);
            };
          const v = Reflect.get(target, prop, receiver) as unknown;
          return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
        },
      });
      return { nc, jsm, raced: { streams } };
    }

    it("a stream another client added between the look-up and the add is used, and given this bus's settings", async () => {
      const { nc, jsm, raced } = await racedManager("RACED_A");
      try {
        await jsm.streams.add({ name: "RACED_A", subjects: ["raced.a.>"], max_age: nanos(60_000) });
        await ensureStream(raced, { name: "RACED_A", subjects: ["raced.a.>"], max_age: nanos(120_000) });
        expect((await jsm.streams.info("RACED_A")).config.max_age).toBe(nanos(120_000));
        // The same config added twice: nothing to change.
        await ensureStream(jsm, { name: "RACED_A", subjects: ["raced.a.>"], max_age: nanos(120_000) });
      } finally {
        await nc.close();
      }
    });

    it("a stream of another name over the same subjects is still an error that names the stream", async () => {
      const { nc, jsm, raced } = await racedManager("RACED_B");
      try {
        await jsm.streams.add({ name: "SOMEONE_ELSES", subjects: ["raced.b.>"] });
        await expect(ensureStream(raced, { name: "RACED_B", subjects: ["raced.b.>"] })).rejects.toThrow(/cannot create stream RACED_B: .*overlap/);
      } finally {
        await nc.close();
      }
    });

    it("eight buses connecting to a fresh server at once all connect", async () => {
      for (let round = 0; round < 3; round++) {
        const fresh = await startNatsServer({ jetstream: true });
        try {
          const buses = await Promise.all(Array.from({ length: 8 }, () => NatsBus.connect({ servers: [fresh.url], logger: quiet })));
          await Promise.all(buses.map((b) => b.close()));
        } finally {
          await fresh.stop();
        }
      }
    });
  });
});
