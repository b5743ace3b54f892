// A RecordResult as the coordinator's domain sees it, after conversion from the wire (wire.ts).

export interface IncomingResult {
  unitId: string;
  runId: string;
  /** question key -> option key -> probability, as sent. */
  probs: Record<string, Record<string, number>>;
  skipped: string[];
  errors: Record<string, string>;
  promptTokens: number;
  /** null: the engine did not report it (unknown, not 0). */
  cachedTokens: number | null;
  completionTokens: number;
  requests: number;
  latencyMs: number;
  payloadSha256: string;
  answeredBy: Record<string, string>;
  retries: number;
  approximate: boolean;
}
