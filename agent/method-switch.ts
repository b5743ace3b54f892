// `agent --method any`: one agent that answers with whichever engine method each run names (a
// sweep's runs differ in method), by holding one of each and switching on the run's Welcome.
import type { EngineInfo, EngineMethod, RecordAnswer, RecordPayload, RunParams } from "./engine-method.js";


export class MethodSwitch implements EngineMethod {
  private current: EngineMethod;
  /**
   * The method switched to last read the engine in an earlier run: its model may be another since
   * (the engine restarted with this run's model), and asking for that one errors every record
   * until a probe. Its info is read again before its first answer.
   */
  private refresh: Promise<unknown> | "wanted" | undefined;

  constructor(private readonly methods: ReadonlyMap<string, EngineMethod>, initial: string) {
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
    if (next !== this.current) this.refresh = "wanted";
    this.current = next;
    return true;
  }

  info(signal?: AbortSignal): Promise<EngineInfo> {
    return this.current.info(signal);
  }

  async answer(record: RecordPayload, signal: AbortSignal): Promise<RecordAnswer> {
    if (this.refresh === "wanted") this.refresh = this.current.info(signal).catch(() => undefined);
    if (this.refresh) await this.refresh;
    return this.current.answer(record, signal);
  }

  applyRunParams(params: RunParams): void {
    for (const m of this.methods.values()) m.applyRunParams?.(params);
  }
}
