// udm-orch status --coordinator HOST:PORT [--token T] [--json]: a coordinator's RunStatus.
// udm-orch status --out DIR [--json]: the same read from a run's results directory, running,
// finished or killed, without a coordinator.
import * as grpc from "@grpc/grpc-js";
import type { Command } from "commander";
import { UdmError, UsageError } from "../common/errors.js";
import { loadPackageDefinition, type ProtoGrpcType } from "../proto/loader.js";
import { pem, runStatusFromWire, type RunStatusWire } from "../coordinator/index.js";
import type { RunStatus } from "../common/run-status/index.js";
import { readOutDirStatus, type OutDirStatus } from "../run/index.js";
import { opt, localOpt, intArg } from "./options.js";
import { flagOptions } from "./flag-group.js";
import { printable } from "../common/printable.js";
import { tokenFlags } from "./flags/access-flags.js";

interface StatusFlags {
  coordinator?: string;
  out?: string;
  token?: string;
  json?: boolean;
  tlsCa?: string;
  tlsCert?: string;
  tlsKey?: string;
  timeoutMs?: string;
}

export function register(program: Command): void {
  const command = program
    .command("status")
    .description("show a coordinator's run status: per-track progress, agents, counters (or, with --out, a run's status from its results directory)")
    .addOption(opt("--coordinator <host:port>", "coordinator address"))
    .addOption(localOpt("--out <dir>", "a run's results directory (a coordinator's --out), running, finished or killed: read without a coordinator"));
  for (const o of flagOptions(tokenFlags("bearer token the coordinator expects"))) command.addOption(o);
  command
    .addOption(opt("--json", "print the RunStatus as JSON"))
    .addOption(opt("--tls-ca <file>", "CA certificate (PEM) of the coordinator; enables TLS"))
    .addOption(opt("--tls-cert <file>", "client certificate (PEM) for mutual TLS"))
    .addOption(opt("--tls-key <file>", "client key (PEM) for mutual TLS"))
    .addOption(opt("--timeout-ms <ms>", "deadline of the call (default 10000)"))
    .action(async (flags: StatusFlags, cmd: Command) => {
      // UDM_COORDINATOR is exported for agents (the chart, Compose, Slurm): --out given on the
      // command line reads the directory, not the coordinator the environment names.
      if (flags.out !== undefined && cmd.getOptionValueSource("coordinator") === "env") delete flags.coordinator;
      if ((flags.out === undefined) === (flags.coordinator === undefined)) throw new UsageError("give one of --coordinator <host:port> or --out <dir>");
      if (flags.out !== undefined) {
        const status = readOutDirStatus(flags.out);
        process.stdout.write(flags.json ? JSON.stringify(status, null, 2) + "\n" : formatOutDirStatus(status));
        return;
      }
      if (!/^(\[[0-9a-fA-F:]+\]|[^:\s/]+):\d{1,5}$/.test(flags.coordinator!)) {
        throw new UsageError(`--coordinator must be HOST:PORT, got ${JSON.stringify(flags.coordinator)}`);
      }
      if (Boolean(flags.tlsCert) !== Boolean(flags.tlsKey)) throw new UsageError("--tls-cert and --tls-key go together");
      const creds =
        flags.tlsCa || flags.tlsCert
          ? grpc.credentials.createSsl(
              flags.tlsCa ? pem(flags.tlsCa, "CA") : null,
              flags.tlsKey ? pem(flags.tlsKey, "key") : null,
              flags.tlsCert ? pem(flags.tlsCert, "certificate") : null,
            )
          : grpc.credentials.createInsecure();
      const status = await fetchStatus(flags.coordinator!, creds, flags.token, intArg("timeout-ms", flags.timeoutMs, 1) ?? 10_000);
      process.stdout.write(flags.json ? JSON.stringify(status, null, 2) + "\n" : formatStatus(runStatusFromWire(status)));
    });
}

/** A results directory's status: the run, its state and per-track progress with headlines. */
export function formatOutDirStatus(s: OutDirStatus): string {
  const pct = (a: number, b: number | null) => (b ? `${((100 * a) / b).toFixed(1)}%` : "-");
  const p = printable;
  const lines = [
    `run ${p(s.run_id)}  state ${p(s.state)}${s.coordinator ? ` (coordinator pid ${s.coordinator.pid} on ${p(s.coordinator.host)})` : ""}  suite ${p(s.suite_identity.slice(0, 12))}`,
    `records ${s.records_committed}/${s.records_total ?? "?"} (${pct(s.records_committed, s.records_total)})${s.run_card_status ? `, run card ${p(s.run_card_status)}` : ""}` +
      (s.elapsed_seconds !== undefined ? `, ${s.elapsed_seconds.toFixed(0)} s` : ""),
    "",
  ];
  const tw = widest(s.tracks, (t) => p(t.track).length, 5);
  const fw = widest(s.tracks, (t) => p(t.family).length, 6);
  lines.push(`${"track".padEnd(tw)}  ${"family".padEnd(fw)}  ${"committed".padStart(9)}  ${"records".padStart(7)}  done  headline`);
  for (const t of s.tracks) {
    const headline = t.headline ? `${p(t.headline.metric)} ${t.headline.value === null ? "-" : t.headline.value.toFixed(4)}` : "";
    lines.push(
      `${p(t.track).padEnd(tw)}  ${p(t.family).padEnd(fw)}  ${String(t.committed).padStart(9)}  ${String(t.records ?? "?").padStart(7)}  ${(t.complete ? "yes" : pct(t.committed, t.records)).padEnd(4)}  ${headline}`.trimEnd(),
    );
  }
  if (s.agents.length > 0) {
    lines.push("");
    const aw = widest(s.agents, (a) => p(a.agent_id).length, 5);
    lines.push(`${"agent".padEnd(aw)}  state     model`);
    for (const a of s.agents) {
      const state = a.attached ? (a.ready ? "ready" : "attached") : "left";
      const why = !a.attached && a.left_reason ? `  left ${p(a.left_at ?? "")}: ${p(a.left_reason)}` : "";
      lines.push(`${p(a.agent_id).padEnd(aw)}  ${state.padEnd(8)}  ${p(a.model)}${why}`.trimEnd());
    }
  }
  return lines.join("\n") + "\n";
}

export async function fetchStatus(address: string, creds: grpc.ChannelCredentials, token: string | undefined, timeoutMs: number): Promise<RunStatusWire> {
  const proto = grpc.loadPackageDefinition(loadPackageDefinition()) as unknown as ProtoGrpcType;
  const client = new proto.udm.v1.Coordinator(address, creds);
  const md = new grpc.Metadata();
  if (token) md.set("authorization", `Bearer ${token}`);
  try {
    return await new Promise<RunStatusWire>((resolve, reject) =>
      client.Status({}, md, { deadline: Date.now() + timeoutMs }, (err, res) => (err ? reject(err) : resolve(res!))),
    );
  } catch (err) {
    const e = err as grpc.ServiceError;
    if (e.code === grpc.status.UNAUTHENTICATED) throw new UsageError(`${address}: ${printable(e.details || "unauthenticated")} (--token)`, { cause: err });
    throw new UdmError(`cannot get the status of ${address}: ${printable(e.details || e.message)}`, { cause: err });
  } finally {
    client.close();
  }
}

/** The widest of `min` and each value's length, without spreading a remote-sized array into arguments. */
function widest<T>(items: readonly T[], len: (item: T) => number, min: number): number {
  let w = min;
  for (const item of items) w = Math.max(w, len(item));
  return w;
}

// Everything below comes from the coordinator: its strings are printed through printable(), so a
// crafted agent id or track name cannot send terminal escapes, and sizes are never spread into
// call arguments (a status of 300k tracks overflowed the stack).
export function formatStatus(s: RunStatus): string {
  const pct = (a: number, b: number) => (b > 0 ? `${((100 * a) / b).toFixed(1)}%` : "-");
  const p = printable;
  const lines = [
    `run ${p(s.runId)}  state ${p(String(s.state))}  suite ${p(s.suiteIdentity.slice(0, 12))}`,
    `records ${s.recordsCommitted}/${s.recordsTotal} (${pct(s.recordsCommitted, s.recordsTotal)}), ${s.recordsResumed} resumed, ` +
      `${s.recordsPerSecond.toFixed(1)} records/s, ${s.elapsedSeconds.toFixed(0)} s` +
      (s.elapsedBeforeSeconds > 0 ? ` (${s.elapsedBeforeSeconds.toFixed(0)} s before this coordinator)` : ""),
    `units ${s.unitsQueued} queued, ${s.unitsInflight} in flight; ${s.resultsRejected} results rejected, ` +
      `${s.leasesExpired} leases expired, ${s.backupUnits} backup units`,
  ];
  const reasons = Object.entries(s.rejectedByReason).filter(([, n]) => Number(n) > 0);
  if (reasons.length > 0 || s.resultsDuplicate > 0 || s.recordsGivenUp > 0) {
    lines.push(
      `rejected by reason: ${reasons.length ? reasons.map(([r, n]) => `${p(r)}=${p(String(n))}`).join(" ") : "none"}; ` +
        `${s.resultsDuplicate} duplicates dropped, ${s.recordsGivenUp} records given up`,
    );
  }
  lines.push("");
  const tracks = s.tracks.map((t) => ({ ...t, track: p(t.track), family: p(t.family) }));
  const tw = widest(tracks, (t) => t.track.length, 5);
  const fw = widest(tracks, (t) => t.family.length, 6);
  lines.push(`${"track".padEnd(tw)}  ${"family".padEnd(fw)}  ${"committed".padStart(9)}  ${"records".padStart(7)}  done`);
  for (const t of tracks) {
    lines.push(`${t.track.padEnd(tw)}  ${t.family.padEnd(fw)}  ${String(t.committed).padStart(9)}  ${String(t.records).padStart(7)}  ${t.complete ? "yes" : pct(t.committed, t.records)}`);
  }
  lines.push("");
  const listed = [...s.agents, ...s.agentsLeft];
  if (listed.length === 0) lines.push("no agents attached");
  else {
    const agents = listed.map((a) => ({ ...a, agentId: p(a.agentId), model: p(a.model) }));
    const left = s.agentsLeft.length;
    lines.push(`agents ${s.agents.filter((a) => a.ready).length} ready of ${s.agents.length} attached${left > 0 ? `, ${left} left lately` : ""}`);
    const aw = widest(agents, (a) => a.agentId.length, 5);
    lines.push(`${"agent".padEnd(aw)}  ready  units  credit  ${"results".padStart(7)}  rejected  model`);
    for (const a of agents) {
      const ready = a.left ? "left" : a.ready ? "yes" : "no";
      const why = a.left ? `  (left ${p(a.left.at)}: ${p(a.left.reason)})` : "";
      lines.push(
        `${a.agentId.padEnd(aw)}  ${ready.padEnd(5)}  ${String(a.inflightUnits).padStart(5)}  ${String(a.credit).padStart(6)}  ${String(a.results).padStart(7)}  ${String(a.rejected).padStart(8)}  ${a.model}${why}`,
      );
    }
  }
  return lines.join("\n") + "\n";
}
