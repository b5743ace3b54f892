// Label-read tests' set-up: a simulated engine per test (closed after it) and a LabelReadMethod on it.
import { afterEach } from "vitest";
import { startSimEngine, type SimEngine, type SimEngineOptions } from "../../sim/engine/server.js";
import { LabelReadMethod, type LabelReadOptions } from "../../agent/methods/label-read.js";

/** Registers the engines' cleanup in the calling test file; returns its set-up and the engine list. */
export function labelReadSetup() {
  const engines: SimEngine[] = [];
  afterEach(async () => {
    await Promise.all(engines.splice(0).map((e) => e.close()));
  });
  async function setup(sim: SimEngineOptions = {}, method: Partial<LabelReadOptions> = {}): Promise<{ engine: SimEngine; method: LabelReadMethod }> {
    const engine = await startSimEngine({ model: "tiny", seed: 3, ...sim });
    engines.push(engine);
    return { engine, method: new LabelReadMethod({ baseUrl: engine.url, retry: { minBackoffMs: 1, maxBackoffMs: 5 }, ...method }) };
  }
  return { setup, engines };
}
