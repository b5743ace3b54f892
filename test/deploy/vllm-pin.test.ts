// The vLLM the deployments start must serve the default method: /v1/systemone came in vLLM 0.32.0
// and /v1/decisions in 0.33.0; an older one answers 404 to both. The chart, Compose and the Slurm
// script's header name one release, at least 0.33.0.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

const MIN = [0, 33, 0];

function version(tag: string): number[] {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(tag);
  if (!m) throw new Error(`not a release tag: ${tag}`);
  return [Number(m[1]), Number(m[2]), Number(m[3])];
}

const atLeast = (v: number[], min: number[]): boolean => {
  for (let i = 0; i < 3; i++) if (v[i] !== min[i]) return v[i]! > min[i]!;
  return true;
};

describe("the pinned vLLM release", () => {
  const chart = (parse(readFileSync("helm/udm-orch/values.yaml", "utf8")) as { agents: { vllm: { image: { repository: string; tag: string } } } }).agents.vllm.image;
  const composeImage = (parse(readFileSync("deploy/compose/compose.yaml", "utf8")) as { "x-agent": { image: string } })["x-agent"].image;
  const composeTag = /vllm\/vllm-openai:([^}]+)\}$/.exec(composeImage)?.[1] ?? "";
  const slurm = /vllm==(\d+\.\d+\.\d+)/.exec(readFileSync("deploy/slurm/udm-orch.sbatch", "utf8"))?.[1] ?? "";

  it("serves /v1/systemone and /v1/decisions (0.33.0 or later) in the chart, Compose and the Slurm docs", () => {
    expect(chart.repository).toBe("vllm/vllm-openai");
    expect(atLeast(version(chart.tag), MIN), chart.tag).toBe(true);
    expect(atLeast(version(composeTag), MIN), composeTag).toBe(true);
    expect(atLeast(version(slurm), MIN), slurm).toBe(true);
  });

  it("is the same release everywhere", () => {
    expect(version(composeTag)).toEqual(version(chart.tag));
    expect(version(slurm)).toEqual(version(chart.tag));
  });
});
