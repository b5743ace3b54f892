// Which bus a process uses: NATS JetStream when --nats is given, otherwise the in-process bus
// (one machine, `udm-orch run`).
import { type Bus, InProcessBus, NatsBus, DeferredNatsBus } from "../common/bus/index.js";
import type { Logger } from "../common/log.js";
import { natsBusOptionsFrom, type NatsFlagValues } from "./nats-options.js";

export interface OpenBusOptions {
  logger?: Logger;
  /**
   * Return at once even when NATS is unreachable, connecting in the background (the coordinator,
   * which must run through outages). Without it an unreachable NATS is a BusError.
   */
  background?: boolean;
}

/** Opens the bus the NATS flags ask for; throws UsageError for bad flags, BusError when NATS is unreachable. */
export async function openBus(flags: NatsFlagValues, opts: OpenBusOptions | Logger = {}): Promise<Bus> {
  const { logger, background } = "info" in opts ? { logger: opts as Logger, background: false } : (opts as OpenBusOptions);
  const options = natsBusOptionsFrom(flags);
  if (!options) return new InProcessBus(logger ? { logger } : {});
  const withLog = logger ? { ...options, logger } : options;
  return background ? new DeferredNatsBus(withLog) : NatsBus.connect(withLog);
}
