// A real Prometheus (Debian's `prometheus`) for integration tests: scrapes the given targets at a
// short interval, listens on 127.0.0.1 port 0 (the port is read from its log), answers queries.
import { spawn, type ChildProcess } from "node:child_process";
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { stringify } from "yaml";

export interface PrometheusJob {
  job: string;
  /** host:port of each target (its /metrics). */
  targets: readonly string[];
  /** A file holding the bearer token the targets' /metrics need (`authorization: credentials_file`). */
  credentialsFile?: string;
}

export interface RunningPrometheus {
  url: string;
  /** Instant query; the result vector. */
  query(promql: string): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>>;
  get<T>(path: string): Promise<T>;
  output(): string;
  stop(): Promise<void>;
}

export async function startPrometheus(
  dir: string,
  jobs: readonly PrometheusJob[],
  /** scrapeConfigs: more scrape_configs entries as they are (e.g. a shipped config's file_sd jobs). */
  options: { scrapeMs?: number; ruleFiles?: readonly string[]; scrapeConfigs?: readonly unknown[] } = {},
): Promise<RunningPrometheus> {
  mkdirSync(dir, { recursive: true });
  const interval = `${options.scrapeMs ?? 500}ms`;
  const rules = (options.ruleFiles ?? []).map((f) => {
    copyFileSync(f, join(dir, basename(f)));
    return basename(f);
  });
  const config = [
    "global:",
    `  scrape_interval: ${interval}`,
    `  evaluation_interval: ${interval}`,
    ...(rules.length ? ["rule_files:", ...rules.map((r) => `  - ${r}`)] : []),
    "scrape_configs:",
    ...jobs.flatMap((j) => [
      `  - job_name: ${j.job}`,
      `    scrape_timeout: ${interval}`,
      ...(j.credentialsFile ? ["    authorization:", "      type: Bearer", `      credentials_file: ${JSON.stringify(j.credentialsFile)}`] : []),
      "    static_configs:", `      - targets: [${j.targets.map((t) => JSON.stringify(t)).join(", ")}]`]),
    ...(options.scrapeConfigs?.length ? stringify(options.scrapeConfigs).trimEnd().split("\n").map((l) => `  ${l}`) : []),
  ].join("\n");
  writeFileSync(join(dir, "prometheus.yml"), config + "\n");
  const child: ChildProcess = spawn(
    "prometheus",
    [`--config.file=${join(dir, "prometheus.yml")}`, `--storage.tsdb.path=${join(dir, "data")}`, "--web.listen-address=127.0.0.1:0", "--log.level=info"],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`prometheus did not start:\n${out}`)), 30_000);
    const onData = (b: Buffer) => {
      out += b.toString();
      const m = /msg="Listening on" address=(127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(`http://${m[1]}`);
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`prometheus exited:\n${out}`));
    });
  });
  const get = async <T>(path: string): Promise<T> => {
    const res = await fetch(url + path);
    const body = (await res.json()) as { status: string; data: T; error?: string };
    if (body.status !== "success") throw new Error(`prometheus ${path}: ${body.error ?? res.status}`);
    return body.data;
  };
  return {
    url,
    get,
    async query(promql) {
      const data = await get<{ resultType: string; result: Array<{ metric: Record<string, string>; value: [number, string] }> }>(`/api/v1/query?query=${encodeURIComponent(promql)}`);
      return data.result;
    },
    output: () => out,
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      const t = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(t);
    },
  };
}
