// Which bus a process uses: NATS JetStream when --nats is given, otherwise the in-process bus
// (one machine, `udm-orch run`).
import type { Bus } from "./bus.js";
import { InProcessBus } from "./bus-in-process.js";
import { NatsBus } from "./bus-nats.js";
import type { Logger } from "./log.js";
import { natsBusOptionsFrom, type NatsFlagValues } from "./nats-options.js";

/** Opens the bus the NATS flags ask for; throws UsageError for bad flags, BusError when NATS is unreachable. */
export async function openBus(flags: NatsFlagValues, logger?: Logger): Promise<Bus> {
  const options = natsBusOptionsFrom(flags);
  if (!options) return new InProcessBus(logger ? { logger } : {});
  return NatsBus.connect(logger ? { ...options, logger } : options);
}
