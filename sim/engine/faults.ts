// Faults on demand: `--faults "5xx=0.05,hang=0.01,429=0.02,crash-after=500"`. Draws come from a
// PRNG seeded by --seed and are taken in arrival order of inference requests, so a sequential
// client sees the same faults on every run.
import { UsageError } from "../../common/errors.js";
import { seededRandom } from "./model/deterministic.js";

export interface FaultSpec {
  /** Share of inference requests answered 500 or 503 with a vLLM error body. */
  serverErrorRate: number;
  /** Share answered 429 (vLLM behind a rate-limiting proxy, or load shedding). */
  tooManyRequestsRate: number;
  /** Share never answered (until the client gives up). */
  hangRate: number;
  /** The engine dies after answering this many inference requests. */
  crashAfter: number | undefined;
}

export const NO_FAULTS: FaultSpec = { serverErrorRate: 0, tooManyRequestsRate: 0, hangRate: 0, crashAfter: undefined };

export function parseFaults(spec: string | undefined): FaultSpec {
  const out: FaultSpec = { ...NO_FAULTS };
  if (!spec?.trim()) return out;
  for (const part of spec.split(",").map((s) => s.trim()).filter(Boolean)) {
    const [name, raw] = part.split("=", 2).map((s) => s.trim());
    const value = Number(raw);
    if (raw === undefined || raw === "" || !Number.isFinite(value)) throw new UsageError(`--faults: ${JSON.stringify(part)} needs a number, e.g. 5xx=0.05`);
    const rate = () => {
      if (value < 0 || value > 1) throw new UsageError(`--faults: ${name} must be a rate in [0, 1], got ${raw}`);
      return value;
    };
    switch (name) {
      case "5xx":
        out.serverErrorRate = rate();
        break;
      case "429":
        out.tooManyRequestsRate = rate();
        break;
      case "hang":
        out.hangRate = rate();
        break;
      case "crash-after":
        if (!Number.isInteger(value) || value < 0) throw new UsageError(`--faults: crash-after must be an integer >= 0, got ${raw}`);
        out.crashAfter = value;
        break;
      default:
        throw new UsageError(`--faults: unknown fault ${JSON.stringify(name)} (known: 5xx, 429, hang, crash-after)`);
    }
  }
  if (out.serverErrorRate + out.tooManyRequestsRate + out.hangRate > 1) throw new UsageError("--faults: the rates add up to more than 1");
  return out;
}

export type FaultDecision = { kind: "none" } | { kind: "status"; status: 500 | 503 | 429 } | { kind: "hang" } | { kind: "crash" };

export class FaultInjector {
  private readonly random: () => number;
  private answered = 0;

  constructor(
    readonly spec: FaultSpec,
    seed: number,
  ) {
    this.random = seededRandom(seed ^ 0xfa17);
  }

  /** What happens to the next inference request. */
  next(): FaultDecision {
    if (this.spec.crashAfter !== undefined && this.answered >= this.spec.crashAfter) return { kind: "crash" };
    this.answered++;
    const u = this.random();
    const { serverErrorRate: e, tooManyRequestsRate: t, hangRate: h } = this.spec;
    if (u < e) return { kind: "status", status: this.random() < 0.5 ? 500 : 503 };
    if (u < e + t) return { kind: "status", status: 429 };
    if (u < e + t + h) return { kind: "hang" };
    return { kind: "none" };
  }
}
