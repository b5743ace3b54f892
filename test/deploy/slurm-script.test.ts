// deploy/slurm/udm-orch.sbatch's argument construction, run by bash with stand-ins for srun,
// scontrol, udm-orch and vllm that write down their argv (the full Slurm run is
// slurm.integration.test.ts). The stand-in udm-orch starts the agent's --vllm-cmd with sh -c, as
// the agent does, with VLLM_API_KEY from --engine-api-key-file (or UDM_ENGINE_API_KEY) as the
// agent's supervisor sets it. Names with spaces stay one argument; $(...) in UDM_MODEL runs nothing.
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/cli-process.js";

const SBATCH = join(REPO_ROOT, "deploy", "slurm", "udm-orch.sbatch");

// Each stand-in appends one line per call: its name, then its arguments, each in <...>.
const RECORD = `rec() { local line="$1"; shift; for a in "$@"; do line+=" <$a>"; done; printf '%s\\n' "$line" >> "$CALLS"; }`;
const SRUN = `#!/usr/bin/env bash
${RECORD}
rec srun "$@"
while [[ "\${1:-}" == -* ]]; do shift; done
SLURM_LOCALID=0 exec "$@"
`;
const UDM_ORCH = `#!/usr/bin/env bash
${RECORD}
rec udm-orch "$@"
# What the job gives udm-orch besides its argv: the token, and the file_sd targets while it runs.
printf '%s\n' "\${UDM_TOKEN:-}" >> "$CALLS.token"
if [ "$1" = coordinator ] && [ -n "\${UDM_SLURM_FILE_SD_DIR:-}" ]; then cp -r "$UDM_SLURM_FILE_SD_DIR" "$CALLS.sd"; fi
prev=""
key=\${UDM_ENGINE_API_KEY:-}
for a in "$@"; do
  if [ "$prev" = --engine-api-key-file ]; then key=$(cat "$a"); fi
  prev=$a
done
prev=""
for a in "$@"; do
  if [ "$prev" = --vllm-cmd ]; then VLLM_API_KEY=$key sh -c "$a"; fi
  prev=$a
done
exit 0
`;
const VLLM = `#!/usr/bin/env bash
${RECORD}
rec vllm "$@"
printf '%s\n' "\${VLLM_API_KEY:-}" >> "$CALLS.vllm-key"
`;

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function stage(): { dir: string; fakes: string; tool: string } {
  const dir = mkdtempSync(join(tmpdir(), "udm-slurm-script-"));
  dirs.push(dir);
  const fakes = join(dir, "fake bin");
  const tool = join(dir, "my tools");
  mkdirSync(fakes);
  mkdirSync(tool);
  const put = (path: string, text: string) => {
    writeFileSync(path, text);
    chmodSync(path, 0o755);
  };
  put(join(fakes, "srun"), SRUN);
  put(join(fakes, "scontrol"), "#!/bin/sh\necho node1\n");
  put(join(fakes, "vllm"), VLLM);
  put(join(tool, "udm-orch"), UDM_ORCH);
  return { dir, fakes, tool };
}

function runScript(dir: string, fakes: string, env: Record<string, string>): { status: number | null; stdout: string; stderr: string; calls: string[] } {
  const calls = join(dir, "calls.log");
  const r = spawnSync("bash", [SBATCH], {
    cwd: dir,
    encoding: "utf8",
    timeout: 30_000,
    env: {
      PATH: `${fakes}:/usr/bin:/bin`,
      CALLS: calls,
      SLURM_JOB_ID: "7",
      SLURM_JOB_NODELIST: "node1",
      UDM_SUITE: join(dir, "suite dir"),
      UDM_OUT: join(dir, "out dir"),
      UDM_SLURM_AGENT_GRACE_S: "5",
      ...env,
    },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, calls: existsSync(calls) ? readFileSync(calls, "utf8").trim().split("\n") : [] };
}

describe("udm-orch.sbatch arguments", () => {
  it("runs a UDM_SLURM_BIN whose path has a space, and passes a model path with spaces and $(...) to vLLM as one argument, running nothing", () => {
    const { dir, fakes, tool } = stage();
    const model = `${dir}/my models/m$(touch ${dir}/x)\`touch ${dir}/y\``;
    const r = runScript(dir, fakes, { UDM_SLURM_BIN: join(tool, "udm-orch"), UDM_MODEL: model, UDM_SLURM_VLLM_ARGS: "--max-model-len 16384" });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.calls.find((c) => c.startsWith("udm-orch <coordinator>"))).toBe(
      `udm-orch <coordinator> <--suite> <${dir}/suite dir> <--out> <${dir}/out dir> <--listen> <0.0.0.0:20112> <--after-complete> <exit> <--metrics> <0.0.0.0:20113>`,
    );
    expect(r.calls.find((c) => c.startsWith("vllm "))).toBe(
      `vllm <serve> <${model}> <--host> <0.0.0.0> <--enable-prefix-caching> <--max-logprobs> <64> <--enable-prompt-tokens-details> <--max-model-len> <16384> <--port> <20115>`,
    );
    expect(r.calls.find((c) => c.startsWith("udm-orch <score>"))).toBe(`udm-orch <score> <--suite> <${dir}/suite dir> <--results> <${dir}/out dir> <--out> <${dir}/out dir/metrics.json>`);
    expect(existsSync(join(dir, "x"))).toBe(false);
    expect(existsSync(join(dir, "y"))).toBe(false);
  });

  it("still splits a UDM_SLURM_BIN of words (node .../main.js)", () => {
    const { dir, fakes, tool } = stage();
    writeFileSync(join(dir, "plain-udm-orch"), readFileSync(join(tool, "udm-orch")));
    const r = runScript(dir, fakes, { UDM_SLURM_BIN: `bash ${join(dir, "plain-udm-orch")}`, UDM_MODEL: "org/m" });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.calls.filter((c) => c.startsWith("udm-orch ")).map((c) => c.split(" ")[1])).toEqual(expect.arrayContaining(["<coordinator>", "<agent>", "<score>"]));
    expect(r.calls.find((c) => c.startsWith("vllm "))).toMatch(/^vllm <serve> <org\/m> <--host>/);
  });

  it.each([
    ["UDM_SLURM_AGENTS_PER_NODE", "a[$(touch X)]"],
    ["UDM_SLURM_PORT_BASE", "1+1"],
  ])("refuses %s=%j (exit 2) and runs nothing", (name, value) => {
    const { dir, fakes, tool } = stage();
    const r = runScript(dir, fakes, { UDM_SLURM_BIN: join(tool, "udm-orch"), UDM_MODEL: "org/m", [name]: value.replace("X", join(dir, "x")) });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/must be whole numbers/);
    expect(r.calls).toEqual([]);
    expect(existsSync(join(dir, "x"))).toBe(false);
  });

  it("refuses a UDM_SLURM_BIN that cannot run (exit 2, not 127)", () => {
    const { dir, fakes } = stage();
    const r = runScript(dir, fakes, { UDM_SLURM_BIN: join(dir, "no such", "udm-orch"), UDM_MODEL: "org/m" });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/UDM_SLURM_BIN: cannot run/);
  });

  it("makes a token per run when none is exported, kept in the results for the jobs that resume it; an exported one wins", () => {
    const { dir, fakes, tool } = stage();
    const env = { UDM_SLURM_BIN: join(tool, "udm-orch"), UDM_MODEL: "org/m" };
    const first = runScript(dir, fakes, env);
    expect(first.status, first.stderr).toBe(0);
    const file = join(dir, "out dir", ".udm-slurm", "token");
    const token = readFileSync(file, "utf8");
    expect(token).toMatch(/^[0-9a-f]{48}$/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(first.stdout).toContain(`the run's token is in ${file}`);
    // Coordinator, agents and the final score all ran with it.
    const seen = () => new Set(readFileSync(join(dir, "calls.log.token"), "utf8").trim().split("\n"));
    expect(seen()).toEqual(new Set([token]));
    // A requeued or resubmitted job finds it.
    expect(runScript(dir, fakes, env).status).toBe(0);
    expect(seen()).toEqual(new Set([token]));
    expect(readFileSync(file, "utf8")).toBe(token);
    // UDM_TOKEN exported: that one, and the file is not consulted.
    expect(runScript(dir, fakes, { ...env, UDM_TOKEN: "mine" }).status).toBe(0);
    expect(seen()).toEqual(new Set([token, "mine"]));
  });

  it("makes an engine key per run (mode 600): the agents read it from the file, vLLM gets it as VLLM_API_KEY, no command line holds it; an exported UDM_ENGINE_API_KEY wins", () => {
    const { dir, fakes, tool } = stage();
    const env = { UDM_SLURM_BIN: join(tool, "udm-orch"), UDM_MODEL: "org/m" };
    const first = runScript(dir, fakes, env);
    expect(first.status, first.stderr).toBe(0);
    const file = join(dir, "out dir", ".udm-slurm", "engine-api-key");
    const key = readFileSync(file, "utf8");
    expect(key).toMatch(/^[0-9a-f]{48}$/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(key).not.toBe(readFileSync(join(dir, "out dir", ".udm-slurm", "token"), "utf8"));
    const agent = first.calls.find((c) => c.startsWith("udm-orch <agent>"))!;
    expect(agent).toContain(`<--engine-api-key-file> <${file}>`);
    expect(first.calls.join("\n")).not.toContain(key);
    const vllmKeys = () => readFileSync(join(dir, "calls.log.vllm-key"), "utf8").trim().split("\n");
    expect(vllmKeys()).toEqual([key]);
    // A requeued or resubmitted job uses the same key.
    expect(runScript(dir, fakes, env).status).toBe(0);
    expect(readFileSync(file, "utf8")).toBe(key);
    expect(vllmKeys()).toEqual([key, key]);
    // UDM_ENGINE_API_KEY exported: the agents read that one themselves, no file flag.
    const mine = runScript(dir, fakes, { ...env, UDM_ENGINE_API_KEY: "mine" });
    expect(mine.status).toBe(0);
    expect(mine.calls.filter((c) => c.startsWith("udm-orch <agent>")).at(-1)).not.toContain("--engine-api-key-file");
    expect(vllmKeys().at(-1)).toBe("mine");
  });

  it("writes its endpoints as Prometheus file_sd targets while it runs, and removes them at its end", () => {
    const { dir, fakes, tool } = stage();
    const sd = join(dir, "sd dir");
    const r = runScript(dir, fakes, { UDM_SLURM_BIN: join(tool, "udm-orch"), UDM_MODEL: "org/m", UDM_SLURM_AGENTS_PER_NODE: "2", UDM_SLURM_FILE_SD_DIR: sd });
    expect(r.status, r.stderr).toBe(0);
    const seen = join(dir, "calls.log.sd");
    const read = (role: string) => JSON.parse(readFileSync(join(seen, `7-${role}.json`), "utf8")) as Array<{ targets: string[]; labels: Record<string, string> }>;
    const labels = (role: string) => ({ udm_role: role, slurm_job_id: "7", udm_out: join(dir, "out dir") });
    // Ports from PORT_BASE 20112 (job 7): coordinator +1, agent i +2+2i, its vLLM +3+2i.
    expect(read("coordinator")).toEqual([{ targets: ["node1:20113"], labels: labels("coordinator") }]);
    expect(read("agents")).toEqual([{ targets: ["node1:20114", "node1:20116"], labels: labels("agents") }]);
    expect(read("vllm")).toEqual([{ targets: ["node1:20115", "node1:20117"], labels: labels("vllm") }]);
    expect(readdirSync(sd)).toEqual([]);
    // vLLM on the loopback: nothing to scrape there, so no vLLM targets.
    rmSync(seen, { recursive: true });
    expect(runScript(dir, fakes, { UDM_SLURM_BIN: join(tool, "udm-orch"), UDM_MODEL: "org/m", UDM_SLURM_FILE_SD_DIR: sd, UDM_SLURM_VLLM_HOST: "127.0.0.1" }).status).toBe(0);
    expect(readdirSync(seen).sort()).toEqual(["7-agents.json", "7-coordinator.json"]);
    expect(r.calls.find((c) => c.startsWith("vllm "))).toMatch(/<--host> <0\.0\.0\.0>/);
  });

  it("asks Slurm for the time-limit signal and requeueing", () => {
    const text = readFileSync(SBATCH, "utf8");
    expect(text).toMatch(/^#SBATCH --requeue$/m);
    expect(text).toMatch(/^#SBATCH --signal=B:USR1@\d+$/m);
  });
});
