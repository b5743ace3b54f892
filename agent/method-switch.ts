// `agent --method any`: one agent that answers with whichever engine method each run names (a
// sweep's runs differ in method), by holding one of each and switching on the run's Welcome.
import type { EngineInfo, EngineMethod, RecordAnswer, RecordPayload, RunParams } from "./engine-method.js";

type Seeded = EngineMethod & { setSeeds(seeds: readonly number[]): void };

export class MethodSwitch implements EngineMethod {
  private current: Seeded;

  constructor(private readonly methods: ReadonlyMap<string, Seeded>, initial: string) {
    const first = methods.get(initial);
    if (!first) throw new Error(`no engine method ${initial}`);
    this.current = first;
  }

  get name(): EngineMethod["name"] {
    return this.current.name;
  }

  /** Switches to the named method; false when this agent has no such method. */
  use(name: string): boolean {
    const next = this.methods.get(name);
    if (!next) return false;
    this.current = next;
    return true;
  }

  setSeeds(seeds: readonly number[]): void {
    for (const m of this.methods.values()) m.setSeeds(seeds);
  }

  info(signal?: AbortSignal): Promise<EngineInfo> {
    return this.current.info(signal);
  }

  answer(record: RecordPayload, signal: AbortSignal): Promise<RecordAnswer> {
    return this.current.answer(record, signal);
  }

  applyRunParams(params: RunParams): void {
    this.current.applyRunParams?.(params);
  }
}
