// `udm-orch run --config run.yaml`: one run declared with the keys of a sweep (docs/run-card.md
// "Sweeps"), its matrix a single cell: one model, one method, one temperature, one seed set. The
// same file grows into a sweep by adding values; a sweep's cell can be rerun alone with `run`.
import { UsageError } from "../../common/errors.js";
import { expandSweep, readSweepConfig, type SweepConfig, type SweepRun } from "./sweep-config.js";

export interface RunConfig {
  config: SweepConfig;
  run: SweepRun;
}

export function readRunConfig(path: string): RunConfig {
  const config = readSweepConfig(path);
  const runs = expandSweep(config);
  if (runs.length !== 1) {
    throw new UsageError(
      `${path}: run --config takes one run, this config declares ${runs.length} (${config.models.length} models x ${config.methods.length} methods x ${config.temperatures.length} temperatures x ${config.seed_sets.length} seed sets); use udm-orch sweep --config for a matrix`,
    );
  }
  return { config, run: runs[0]! };
}
