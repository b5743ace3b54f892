// The agent's options are declared once: withAgentDefaults fills what is not given from
// AGENT_DEFAULTS, and `agent --help` shows those same defaults.
import { describe, expect, it } from "vitest";
import { AGENT_DEFAULTS, DEFAULT_RETRY_POLICY, withAgentDefaults } from "../../agent/index.js";

describe("withAgentDefaults", () => {
  it("fills every default and keeps what is given (undefined counts as not given)", () => {
    const o = withAgentDefaults({ coordinator: "c:1", engineUrl: "http://e", retries: 0, maxMessageMb: undefined });
    expect(o).toMatchObject({ ...AGENT_DEFAULTS, retries: 0, coordinator: "c:1", engineUrl: "http://e" });
    expect(o.logger).toBeDefined();
    expect(o.seeds).not.toBe(AGENT_DEFAULTS.seeds);
  });

  it("takes the engine request defaults from the retry policy", () => {
    expect(AGENT_DEFAULTS.requestTimeoutMs).toBe(DEFAULT_RETRY_POLICY.timeoutMs);
    expect(AGENT_DEFAULTS.retries).toBe(DEFAULT_RETRY_POLICY.retries);
  });
});
