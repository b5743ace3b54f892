// The coordinator's bearer token over gRPC (issue 27, item 2): the scheme is case-insensitive
// (RFC 7235: `bearer`, `BEARER`), and an empty token, a prefix of the token and a longer one are
// refused. Real coordinator, real gRPC on 127.0.0.1:0.
import * as grpc from "@grpc/grpc-js";
import { describe, expect, it, vi } from "vitest";
import { writeTinySuite } from "./helpers/tiny-suite.js";
import { useHarness } from "./helpers/harness.js";

const { tmp, start, agent } = useHarness();

describe("gRPC bearer token", () => {
  it("takes the scheme in any case and refuses an empty, shorter or longer token", async () => {
    const h = await start({ suiteDir: writeTinySuite(tmp("suite")), outDir: tmp("out"), token: "s3cret" });
    // A client for Status: its own Attach (no token) is refused, which does not matter here.
    const { client } = agent(h.address, { auto: false, credit: 0 });
    const status = (authorization: string) =>
      new Promise<grpc.status>((resolve) => {
        const md = new grpc.Metadata();
        md.set("authorization", authorization);
        client.Status({}, md, (err) => resolve(err ? err.code : grpc.status.OK));
      });
    for (const ok of ["Bearer s3cret", "bearer s3cret", "BEARER s3cret"]) expect(await status(ok), ok).toBe(grpc.status.OK);
    for (const bad of ["Bearer ", "Bearer", "Bearer s3cre", "Bearer s3crett", "Basic s3cret", "s3cret", "Bearers3cret"]) {
      expect(await status(bad), bad).toBe(grpc.status.UNAUTHENTICATED);
    }
  });

  it("Attach with an empty bearer, a prefix or a longer token is refused before any unit", async () => {
    const h = await start({ suiteDir: writeTinySuite(tmp("suite")), outDir: tmp("out"), token: "s3cret" });
    for (const token of ["", "s3cre", "s3crett"]) {
      const a = agent(h.address, { token, credit: 3 });
      await vi.waitFor(() => expect(a.error?.code, JSON.stringify(token)).toBe(grpc.status.UNAUTHENTICATED), { timeout: 10_000 });
      expect(a.units).toEqual([]);
      // The agent logs this reason: it names what is wrong.
      expect(a.error?.details).toBe("missing or wrong bearer token");
    }
  });

  it("without a token, Attach and Status need no authorization", async () => {
    const h = await start({ suiteDir: writeTinySuite(tmp("suite")), outDir: tmp("out") });
    const a = agent(h.address, { credit: 3 });
    expect((await a.status()).state).toBeDefined();
    expect((await h.done).state).toBe("complete");
    expect(a.units.length).toBeGreaterThan(0);
  });

  it("an agent sending `bearer <token>` is served", async () => {
    const h = await start({ suiteDir: writeTinySuite(tmp("suite")), outDir: tmp("out"), token: "s3cret" });
    const a = agent(h.address, { token: "s3cret", credit: 3, scheme: "bearer" });
    expect((await h.done).state).toBe("complete");
    expect(a.units.length).toBeGreaterThan(0);
  });
});
