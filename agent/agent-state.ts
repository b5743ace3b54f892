// The agent's lifecycle, in one place.
//
//   starting ──► connecting ◄──► running ──► draining ──► stopped
//                    │              │                        ▲
//                    └──────────────┴────────────────────────┘  stop(), auth failure
//
// starting:   probing the engine once (method.info()) before the first attach.
// connecting: no Attach stream is established; waiting out the reconnect backoff or opening one.
// running:    the coordinator answered on the stream; units are received and answered.
// draining:   a Drain came from the coordinator or drain() was called (SIGTERM): no more credit is
//             granted, the units in hand are finished and sent, then the stream is closed.
// stopped:    final; `done` has resolved.
export type AgentState = "starting" | "connecting" | "running" | "draining" | "stopped";

export const AGENT_STATES: readonly AgentState[] = ["starting", "connecting", "running", "draining", "stopped"];

const NEXT: Record<AgentState, readonly AgentState[]> = {
  starting: ["connecting", "draining", "stopped"],
  connecting: ["running", "draining", "stopped"],
  running: ["connecting", "draining", "stopped"],
  draining: ["stopped"],
  stopped: [],
};

export function canTransition(from: AgentState, to: AgentState): boolean {
  return NEXT[from].includes(to);
}
