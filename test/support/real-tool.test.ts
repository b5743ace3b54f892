// The rule every test with an outside tool follows: under CI set to a true value a missing tool
// fails its tests (openssl included); elsewhere they skip with a message.
import { afterEach, describe, expect, it, vi } from "vitest";
import { toolMode, underCi } from "./real-tool.js";
import { makeTestCerts, skipWithoutOpenssl } from "./test-certs.js";

afterEach(() => {
  vi.unstubAllEnvs();
});

describe("underCi", () => {
  it.each(["true", "TRUE", "1", "yes", "Yes", "on"])("CI=%s is CI", (v) => expect(underCi({ CI: v })).toBe(true));
  it.each(["", "false", "0", "no", "off"])("CI=%j is not", (v) => expect(underCi({ CI: v })).toBe(false));
  it("CI unset is not", () => expect(underCi({})).toBe(false));
});

describe("a missing tool", () => {
  const missing = "udm-no-such-tool-4f1c";
  it.each(["true", "1", "yes"])("fails under CI=%s", (v) => {
    vi.stubEnv("CI", v);
    expect(toolMode([missing], "apt-get install it")).toMatchObject({ mode: "fail", message: expect.stringContaining(missing) });
  });

  it("skips outside CI", () => {
    vi.stubEnv("CI", "");
    expect(toolMode([missing], "apt-get install it").mode).toBe("skip");
  });

  it("openssl missing fails the TLS tests under CI, skips them elsewhere", () => {
    vi.stubEnv("PATH", "/nonexistent");
    vi.stubEnv("CI", "1");
    expect(skipWithoutOpenssl()).toBe(false);
    expect(() => makeTestCerts()).toThrow(/openssl not found .*CI=1 needs it/);
    vi.stubEnv("CI", "");
    expect(skipWithoutOpenssl()).toBe(true);
  });
});
