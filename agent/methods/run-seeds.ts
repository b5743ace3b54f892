// The label-permutation seeds a method reads with: the agent's own (--seeds) until a run's
// Welcome names others; a run that names none gets the agent's own back. Every method takes the
// run's seeds the one way, EngineMethod.applyRunParams.
import type { RunParams } from "../engine-method.js";

export class RunSeeds {
  private readonly own: number[];
  private seeds: number[];

  constructor(own: readonly number[] = []) {
    this.own = [...own];
    this.seeds = [...own];
  }

  apply(params: RunParams): void {
    this.seeds = params.seeds.length > 0 ? [...params.seeds] : [...this.own];
  }

  get current(): readonly number[] {
    return this.seeds;
  }
}
