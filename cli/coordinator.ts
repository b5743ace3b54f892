// udm-orch coordinator: serves a suite to agents over gRPC and checkpoints their results.
// Prints the listen address; SIGTERM/SIGINT drain (agents finish what they hold, results are
// flushed) then exit. Exit 0 when every record in scope is committed, 1 when the run stopped
// before (drained, failed), 2 on bad usage or input.
import type { Command } from "commander";
import { EXIT, UsageError } from "../common/errors.js";
import { createLogger } from "../common/log.js";
import { natsBusOptionsFrom, natsCliOptions, type NatsFlagValues } from "./nats-options.js";
import type { TlsOptions, WorkerCoordinatorOptions } from "../coordinator/index.js";
import { csv, intArg, numberArg, opt, portArg } from "./options.js";
import { ensureWritableDir } from "./out-path.js";
import { boolArg, metricsFlags, type MetricsFlagValues } from "./metrics-flags.js";
import { DEFAULT_COORDINATOR_METRICS, parseMetricsListen } from "../common/metrics/index.js";
import { DEFAULT_SCORER_HEAP_MB } from "../scorer/index.js";
import { cardOptions, parseMethodClass } from "./flags/card-flags.js";
import { Run } from "../run/index.js";
import { onShutdownSignals } from "./signals.js";

interface CoordinatorFlags extends NatsFlagValues, MetricsFlagValues {
  suite: string;
  out: string;
  listen: string;
  token?: string;
  tlsCert?: string;
  tlsKey?: string;
  tlsCa?: string;
  mtls?: boolean;
  method: string;
  seeds?: string;
  temperature?: string;
  model?: string;
  leaseMs?: string;
  heartbeatMs?: string;
  drainTimeoutMs?: string;
  tracks?: string;
  families?: string;
  force?: boolean;
  maxHeapMb?: string;
  scorerMaxHeapMb?: string;
  methodClass?: string;
}

const METHODS = ["systemone", "decisions", "label-read"];

export function register(program: Command): void {
  const command = program
    .command("coordinator")
    .description("serve a suite's work units to agents over gRPC and write <out>/<family>/<track>.jsonl")
    .addOption(opt("--suite <dir>", "suite directory (<suite> or <suite>/test)").makeOptionMandatory())
    .addOption(opt("--out <dir>", "results directory: <out>/<family>/<track>.jsonl, <out>/run.json, <out>/metrics.json, <out>/run-card.json (resumed when it holds results of the same run)").makeOptionMandatory())
    .addOption(opt("--listen <host:port>", "address to listen on", "127.0.0.1:50051"))
    .addOption(opt("--token <token>", "bearer token agents and status clients must send"))
    .addOption(opt("--tls-cert <file>", "server certificate (PEM); enables TLS"))
    .addOption(opt("--tls-key <file>", "server private key (PEM)"))
    .addOption(opt("--tls-ca <file>", "CA (PEM) that signs agents' client certificates"))
    .addOption(opt("--mtls", "require agents to present a client certificate signed by --tls-ca"))
    .addOption(opt("--method <name>", `engine method agents run (${METHODS.join(", ")})`, "systemone"))
    .addOption(opt("--seeds <list>", "comma-separated label-permutation seeds (default: one read in natural order)"))
    .addOption(opt("--temperature <t>", "sampling temperature asked of the engine (default 0)"))
    .addOption(opt("--model <name>", "model agents ask their engine for (default: the engine's own)"))
    .addOption(opt("--lease-ms <ms>", "lease of a work unit, renewed by heartbeats (default 30000)"))
    .addOption(opt("--heartbeat-ms <ms>", "heartbeat period asked of agents (default 5000)"))
    .addOption(opt("--drain-timeout-ms <ms>", "how long a drain waits for agents (default 30000)"))
    .addOption(opt("--tracks <list>", "comma-separated tracks (default: all)"))
    .addOption(opt("--families <list>", "comma-separated families (default: all)"))
    .addOption(opt("--force", "resume even when run.json names another suite, tracks or method"))
    .addOption(opt("--max-heap-mb <mb>", "V8 old-generation cap of the coordinator thread, bounding its memory (default 256)"))
    .addOption(opt("--scorer-max-heap-mb <mb>", `V8 old-generation cap of the scorer thread that writes metrics.json (default ${DEFAULT_SCORER_HEAP_MB})`));
  // --nats: committed results, run events and status also go to NATS JetStream (NATS may be down: results still go to disk).
  for (const o of natsCliOptions()) command.addOption(o);
  for (const o of metricsFlags(DEFAULT_COORDINATOR_METRICS, "serve /metrics, the live run page (/) and its API (/api/status, /api/events), /healthz, /readyz")) command.addOption(o);
  // The run card: run-card.json beside the metrics.json this command's scorer writes as tracks complete.
  for (const o of cardOptions()) command.addOption(o);
  command.action(async (flags: CoordinatorFlags) => {
    if (!METHODS.includes(flags.method)) throw new UsageError(`--method must be one of ${METHODS.join(", ")}, got ${JSON.stringify(flags.method)}`);
    if (!/^(\[[0-9a-fA-F:]+\]|[^:\s/]+):\d{1,5}$/.test(flags.listen)) throw new UsageError(`--listen must be HOST:PORT, got ${JSON.stringify(flags.listen)}`);
    portArg("listen port", flags.listen.slice(flags.listen.lastIndexOf(":") + 1));
    if (Boolean(flags.tlsCert) !== Boolean(flags.tlsKey)) throw new UsageError("--tls-cert and --tls-key go together");
    if ((flags.tlsCa || flags.mtls) && !flags.tlsCert) throw new UsageError("--tls-ca and --mtls need --tls-cert and --tls-key");
    if (flags.mtls && !flags.tlsCa) throw new UsageError("--mtls needs --tls-ca to check agents' certificates");
    const seeds = (csv(flags.seeds) ?? []).map((s) => intArg("seeds", s)!);
    ensureWritableDir("out", flags.out);
    const tls: TlsOptions | undefined = flags.tlsCert
      ? { cert: flags.tlsCert, key: flags.tlsKey!, ...(flags.tlsCa ? { ca: flags.tlsCa } : {}), requireClientCert: Boolean(flags.mtls) }
      : undefined;
    const tracks = csv(flags.tracks);
    const families = csv(flags.families);
    const logger = createLogger("coordinator");
    const nats = natsBusOptionsFrom(flags);
    const options: Omit<WorkerCoordinatorOptions, "metrics"> = {
      suiteDir: flags.suite,
      outDir: flags.out,
      listen: flags.listen,
      ...(flags.token ? { token: flags.token } : {}),
      ...(tls ? { tls } : {}),
      ...(tracks ? { tracks } : {}),
      ...(families ? { families } : {}),
      method: {
        method: flags.method,
        seeds,
        temperature: numberArg("temperature", flags.temperature, 0) ?? 0,
        model: flags.model ?? "",
      },
      leaseMs: intArg("lease-ms", flags.leaseMs, 100),
      heartbeatMs: intArg("heartbeat-ms", flags.heartbeatMs, 10),
      drainTimeoutMs: intArg("drain-timeout-ms", flags.drainTimeoutMs, 0),
      force: Boolean(flags.force),
      ...(nats ? { nats } : {}),
    };
    const maxHeapMb = intArg("max-heap-mb", flags.maxHeapMb, 64);
    const metricsListen = parseMetricsListen(flags.metrics);
    const gpuHourUsd = numberArg("gpu-hour-usd", flags.gpuHourUsd, 0) ?? 0;
    const methodClass = parseMethodClass(flags.methodClass);
    const perAgent = boolArg("per-agent-metrics", flags.perAgentMetrics);
    const scorerMaxHeapMb = intArg("scorer-max-heap-mb", flags.scorerMaxHeapMb, 64);
    // Nothing is committed while the suite is read: a signal then just stops (the next start
    // takes over the lock and removes the payload spill left behind).
    let run: Run | undefined;
    const uninstall = onShutdownSignals((signal) => {
      if (run) return run.shutdown(signal);
      logger.warn(`${signal} while starting: stopping; nothing was committed`);
      process.exit(EXIT.failed);
    });
    try {
      run = await Run.create({
        ...options,
        ...(maxHeapMb !== undefined ? { maxHeapMb } : {}),
        ...(scorerMaxHeapMb !== undefined ? { scorerMaxHeapMb } : {}),
        ...(metricsListen ? { metrics: metricsListen } : {}),
        perAgentMetrics: perAgent,
        gpuHourUsd,
        methodClass,
        logger,
      });
      await run.run();
      process.exitCode = EXIT.ok;
    } finally {
      uninstall();
    }
  });
}
