// A real single-node Slurm for tests: munged, slurmctld and slurmd (Debian's slurm-wlm and munge)
// as root on 127.0.0.1, with a fresh munge key, free ports and every state, spool, log and pid
// file under one temp dir. proctrack/linuxproc and task/none need no cgroups or systemd. The node
// has 2 CPUs and 2 GPUs (gres over plain files), so jobs ask for GPUs as on a real cluster.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { hostname } from "node:os";
import { join } from "node:path";

export interface SlurmCluster {
  dir: string;
  node: string;
  /** Environment for sbatch, squeue, scontrol, scancel (SLURM_CONF). */
  env: NodeJS.ProcessEnv;
  /** Runs a Slurm client command and returns its stdout; throws with stderr when it fails. */
  client(cmd: string, args: readonly string[], env?: NodeJS.ProcessEnv): string;
  /** JobState of a job (PENDING, RUNNING, COMPLETED, CANCELLED, FAILED, ...). */
  jobState(jobId: string): string;
  logs(): string;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function slurmConf(dir: string, node: string, ctldPort: number, slurmdPort: number): string {
  return [
    "ClusterName=udmtest",
    `SlurmctldHost=${node}(127.0.0.1)`,
    `SlurmctldPort=${ctldPort}`,
    `SlurmdPort=${slurmdPort}`,
    "SlurmUser=root",
    "SlurmdUser=root",
    "AuthType=auth/munge",
    "CredType=cred/munge",
    `AuthInfo=socket=${join(dir, "munge", "munge.socket")}`,
    "ProctrackType=proctrack/linuxproc",
    "TaskPlugin=task/none",
    "MpiDefault=none",
    "SchedulerType=sched/backfill",
    "SelectType=select/cons_tres",
    "SelectTypeParameters=CR_Core",
    // Two "GPUs" whose device files are plain files (gres.conf): Slurm allocates and binds them per task.
    "GresTypes=gpu",
    `StateSaveLocation=${join(dir, "state")}`,
    `SlurmdSpoolDir=${join(dir, "spool")}`,
    `SlurmctldPidFile=${join(dir, "slurmctld.pid")}`,
    `SlurmdPidFile=${join(dir, "slurmd.pid")}`,
    `SlurmctldLogFile=${join(dir, "log", "slurmctld.log")}`,
    `SlurmdLogFile=${join(dir, "log", "slurmd.log")}`,
    "AccountingStorageType=accounting_storage/none",
    "JobCompType=jobcomp/none",
    "ReturnToService=2",
    // A cancelled job's steps get SIGTERM, then SIGKILL this many seconds later.
    "KillWait=10",
    "MinJobAge=600",
    `NodeName=${node} NodeAddr=127.0.0.1 CPUs=2 Gres=gpu:2 State=UNKNOWN`,
    `PartitionName=debug Nodes=${node} Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES`,
    "",
  ].join("\n");
}

export async function startSlurmCluster(dir: string): Promise<SlurmCluster> {
  for (const d of ["munge", "state", "spool", "log"]) mkdirSync(join(dir, d), { recursive: true });
  // munged wants its key private to root; the socket's folder must be searchable by clients.
  const key = join(dir, "munge", "munge.key");
  writeFileSync(key, randomBytes(1024), { mode: 0o600 });
  chmodSync(join(dir, "munge"), 0o755);
  const node = hostname().split(".")[0]!;
  const conf = join(dir, "slurm.conf");
  writeFileSync(conf, slurmConf(dir, node, await freePort(), await freePort()));
  // slurmd reads gres.conf beside slurm.conf.
  mkdirSync(join(dir, "dev"), { recursive: true });
  for (const i of [0, 1]) writeFileSync(join(dir, "dev", `gpu${i}`), "");
  writeFileSync(join(dir, "gres.conf"), `NodeName=${node} Name=gpu File=${join(dir, "dev")}/gpu[0-1]\n`);
  const env: NodeJS.ProcessEnv = { ...process.env, SLURM_CONF: conf };
  const children: ChildProcess[] = [];
  let output = "";
  const daemon = (cmd: string, args: string[]) => {
    const child = spawn(cmd, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout!.on("data", (b: Buffer) => (output += `[${cmd}] ${b.toString()}`));
    child.stderr!.on("data", (b: Buffer) => (output += `[${cmd}] ${b.toString()}`));
    children.push(child);
    return child;
  };
  const client = (cmd: string, args: readonly string[], extraEnv: NodeJS.ProcessEnv = {}) => {
    const r = spawnSync(cmd, [...args], { env: { ...env, ...extraEnv }, encoding: "utf8", timeout: 30_000 });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} failed (${r.status ?? r.signal}): ${r.stderr}${r.error ?? ""}`);
    return r.stdout;
  };
  const logs = () => {
    let text = output;
    for (const f of ["slurmctld.log", "slurmd.log"]) {
      const p = join(dir, "log", f);
      if (existsSync(p)) text += `\n--- ${f} (tail)\n${readFileSync(p, "utf8").split("\n").slice(-40).join("\n")}`;
    }
    return text;
  };
  const stop = async () => {
    for (const c of children.reverse()) {
      if (c.exitCode !== null || c.signalCode !== null) continue;
      const exited = new Promise((r) => c.once("exit", r));
      c.kill("SIGTERM");
      await Promise.race([exited, sleep(5000)]);
      if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
    }
  };

  const munged = join(dir, "munge");
  daemon("munged", [
    "--foreground",
    "--force",
    `--socket=${join(munged, "munge.socket")}`,
    `--key-file=${key}`,
    `--log-file=${join(munged, "munged.log")}`,
    `--pid-file=${join(munged, "munged.pid")}`,
    `--seed-file=${join(munged, "munged.seed")}`,
  ]);
  for (let i = 0; i < 100 && !readdirSync(munged).includes("munge.socket"); i++) await sleep(50);
  daemon("slurmctld", ["-D", "-i", "-f", conf]);
  daemon("slurmd", ["-D", "-f", conf, "-N", node]);
  const cluster: SlurmCluster = {
    dir,
    node,
    env,
    client,
    jobState(jobId) {
      const m = client("scontrol", ["show", "job", "-o", jobId]).match(/JobState=(\S+)/);
      if (!m) throw new Error(`no JobState for job ${jobId}`);
      return m[1]!;
    },
    logs,
    stop,
  };
  for (let i = 0; ; i++) {
    const r = spawnSync("sinfo", ["-h", "-n", node, "-o", "%T"], { env, encoding: "utf8" });
    if (r.status === 0 && /^idle/m.test(r.stdout)) break;
    if (i >= 150) {
      await stop();
      throw new Error(`Slurm did not come up within 30 s (sinfo: ${r.stdout}${r.stderr}):\n${logs()}`);
    }
    await sleep(200);
  }
  return cluster;
}
