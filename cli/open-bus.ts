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
  /** The run's token: results published are signed with it and results consumed must be (results-mac.ts). */
  resultsToken?: string;
}

/** Opens the bus the NATS flags ask for; throws UsageError for bad flags, BusError when NATS is unreachable. */
export async function openBus(flags: NatsFlagValues, opts: OpenBusOptions | Logger = {}): Promise<Bus> {
  const { logger, background, resultsToken } = "info" in opts ? { logger: opts as Logger, background: false, resultsToken: undefined } : (opts as OpenBusOptions);
  const options = natsBusOptionsFrom(flags);
  // One process: no one else can publish on an in-process bus, so there is nothing to sign.
  if (!options) return new InProcessBus(logger ? { logger } : {});
  const withLog = { ...options, ...(logger ? { logger } : {}), ...(resultsToken ? { resultsToken } : {}) };
  return background ? new DeferredNatsBus(withLog) : NatsBus.connect(withLog);
}
