// Who holds which unit until when. A unit has at most one primary lease and, at the tail of a run,
// backup copies; each lease remembers the records its copy carried that the holder has not yet
// answered, so a copy is finished once every one of them got a result (accepted or not).

export interface Lease {
  unitId: string;
  agentKey: string;
  backup: boolean;
  expiresAt: number;
  /** run_ids sent with this copy and not yet answered by the holder. */
  outstanding: Set<string>;
  /** Planner cost of `outstanding`, kept by the scheduler (how much work the holder has left in it). */
  cost: number;
  /**
   * How many of `outstanding` are settled already (another holder answered them), kept by the
   * scheduler: the holder's next answer drops them, and only then is `outstanding` walked.
   */
  settledElsewhere: number;
}

// Stryker disable next-line ArrayDeclaration: asked only for units with leases (a result's unit, its lease checked)
const NO_LEASES: readonly Lease[] = [];

export class LeaseTable {
  private byUnit = new Map<string, Map<string, Lease>>();
  private byAgent = new Map<string, Set<string>>();

  constructor(private readonly leaseMs: number) {}

  grant(unitId: string, agentKey: string, runIds: Iterable<string>, backup: boolean, now: number, cost = 0): Lease {
    const lease: Lease = { unitId, agentKey, backup, expiresAt: now + this.leaseMs, outstanding: new Set(runIds), cost, settledElsewhere: 0 };
    let holders = this.byUnit.get(unitId);
    if (!holders) this.byUnit.set(unitId, (holders = new Map()));
    holders.set(agentKey, lease);
    let units = this.byAgent.get(agentKey);
    if (!units) this.byAgent.set(agentKey, (units = new Set()));
    units.add(unitId);
    return lease;
  }

  get(unitId: string, agentKey: string): Lease | undefined {
    return this.byUnit.get(unitId)?.get(agentKey);
  }

  holders(unitId: string): Lease[] {
    return [...(this.byUnit.get(unitId)?.values() ?? [])];
  }

  /** The leases of a unit, without a copy of the list (do not release while iterating). */
  leasesOf(unitId: string): Iterable<Lease> {
    // Stryker disable next-line OptionalChaining: as NO_LEASES
    return this.byUnit.get(unitId)?.values() ?? NO_LEASES;
  }

  holderCount(unitId: string): number {
    return this.byUnit.get(unitId)?.size ?? 0;
  }

  unitsOf(agentKey: string): string[] {
    return [...(this.byAgent.get(agentKey) ?? [])];
  }

  countOf(agentKey: string): number {
    return this.byAgent.get(agentKey)?.size ?? 0;
  }

  /** Pushes back the expiry of one lease (a result arrived) or of all an agent holds (heartbeat). */
  renew(agentKey: string, now: number, unitId?: string): void {
    for (const u of unitId !== undefined ? [unitId] : this.unitsOf(agentKey)) {
      const lease = this.get(u, agentKey);
      if (lease) lease.expiresAt = now + this.leaseMs;
    }
  }

  release(unitId: string, agentKey: string): Lease | undefined {
    const holders = this.byUnit.get(unitId);
    const lease = holders?.get(agentKey);
    if (!lease) return undefined;
    holders!.delete(agentKey);
    // Stryker disable next-line ConditionalExpression: an empty holder map left behind answers every query as a deleted one (memory only)
    if (holders!.size === 0) this.byUnit.delete(unitId);
    const units = this.byAgent.get(agentKey);
    // Stryker disable next-line OptionalChaining: a held lease always has its agent's unit set
    units?.delete(unitId);
    // Stryker disable next-line ConditionalExpression,OptionalChaining: an empty unit set left behind answers as a deleted one (memory only); the set always exists here
    if (units?.size === 0) this.byAgent.delete(agentKey);
    return lease;
  }

  releaseAgent(agentKey: string): Lease[] {
    // Stryker disable next-line MethodExpression: the two maps agree, so every unit listed releases a lease (the filter is for the type)
    return this.unitsOf(agentKey)
      .map((u) => this.release(u, agentKey))
      .filter(
        // Stryker disable next-line ConditionalExpression: as above (a comment before `.filter` does not reach its argument)
        (l): l is Lease => l !== undefined,
      );
  }

  releaseUnit(unitId: string): Lease[] {
    // Stryker disable next-line MethodExpression: every holder listed releases its lease (the filter is for the type)
    return this.holders(unitId)
      .map((l) => this.release(unitId, l.agentKey))
      .filter(
        // Stryker disable next-line ConditionalExpression: as above
        (l): l is Lease => l !== undefined,
      );
  }

  expired(now: number): Lease[] {
    const out: Lease[] = [];
    for (const holders of this.byUnit.values()) for (const l of holders.values()) if (l.expiresAt <= now) out.push(l);
    return out;
  }

  get size(): number {
    let n = 0;
    for (const h of this.byUnit.values()) n += h.size;
    return n;
  }
}
