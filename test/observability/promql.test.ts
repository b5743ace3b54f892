// The Grafana dashboard and the Prometheus alert rules: every PromQL expression parses (Prometheus's
// own parser through promtool, and lezer-promql) and names only metrics our processes or vLLM export.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parser } from "@prometheus-io/lezer-promql";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { REPO_ROOT } from "../support/cli-process.js";
import { toolTestMode } from "../support/real-tool.js";
import { knownMetricNames } from "./known-metrics.js";

const DASHBOARD = join(REPO_ROOT, "deploy", "grafana", "udm-orch.json");
const RULES = join(REPO_ROOT, "deploy", "prometheus", "udm-orch-rules.yml");
const SCRAPE = join(REPO_ROOT, "deploy", "prometheus", "prometheus.yml");

interface Panel {
  type: string;
  title: string;
  targets?: Array<{ expr: string }>;
  datasource?: { uid?: string };
}
interface Dashboard {
  uid: string;
  panels: Panel[];
  templating: { list: Array<{ name: string; type: string; query?: unknown; definition?: string }> };
}

const dashboard = JSON.parse(readFileSync(DASHBOARD, "utf8")) as Dashboard;

/** Grafana's interval variables become durations; the others are inside label matchers' strings. */
function promql(expr: string): string {
  return expr.replace(/\$__rate_interval|\$__interval|\$__range/g, "5m");
}

function dashboardExpressions(): Array<{ where: string; expr: string }> {
  const out: Array<{ where: string; expr: string }> = [];
  for (const p of dashboard.panels) for (const t of p.targets ?? []) out.push({ where: `panel "${p.title}"`, expr: promql(t.expr) });
  for (const v of dashboard.templating.list) {
    if (v.type !== "query" || !v.definition) continue;
    // label_values(SELECTOR, label) is Grafana's; its selector is PromQL.
    const m = /^label_values\((.+),\s*\w+\)$/.exec(v.definition);
    expect(m, `variable ${v.name}: ${v.definition}`).not.toBeNull();
    out.push({ where: `variable $${v.name}`, expr: m![1]! });
  }
  return out;
}

function ruleExpressions(): Array<{ where: string; expr: string }> {
  const text = readFileSync(RULES, "utf8");
  const out: Array<{ where: string; expr: string }> = [];
  // The rules file's exprs are either one line or a `|` block indented under `expr:`.
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const m = /^(\s*)expr:\s*(.*)$/.exec(lines[i]!);
    if (!m) continue;
    if (m[2] !== "|") {
      out.push({ where: `${RULES}:${i + 1}`, expr: m[2]! });
      continue;
    }
    const block: string[] = [];
    for (let j = i + 1; j < lines.length && (lines[j]!.trim() === "" || lines[j]!.search(/\S/) > m[1]!.length); j++) block.push(lines[j]!.trim());
    out.push({ where: `${RULES}:${i + 1}`, expr: block.join(" ").trim() });
  }
  return out;
}

/** Metric names a PromQL expression selects; throws on a syntax error. */
function metricNames(expr: string): string[] {
  const tree = parser.parse(expr);
  const names: string[] = [];
  let error: number | undefined;
  tree.iterate({
    enter(node) {
      if (node.type.isError) error ??= node.from;
      if (node.name === "Identifier" && node.node.parent?.name === "VectorSelector") names.push(expr.slice(node.from, node.to));
    },
  });
  if (error !== undefined) throw new Error(`PromQL syntax error at ${error}: ${expr}`);
  return names;
}

describe("Grafana dashboard and Prometheus rules", () => {
  let known: Set<string>;
  beforeAll(async () => {
    known = await knownMetricNames();
  });

  it("the dashboard has a fixed uid, a Prometheus datasource variable and run/family/track/agent variables", () => {
    expect(dashboard.uid).toBe("udm-orch-run");
    const vars = Object.fromEntries(dashboard.templating.list.map((v) => [v.name, v]));
    expect(vars.datasource).toMatchObject({ type: "datasource", query: "prometheus" });
    for (const name of ["run", "family", "track", "agent"]) expect(vars[name], name).toMatchObject({ type: "query" });
    const rows = dashboard.panels.filter((p) => p.type === "row").map((p) => p.title);
    expect(rows).toEqual(["Run overview", "Throughput", "Tracks", "Scheduler health", "Latency", "Engines", "Scores", "Bus and scorer", "Process"]);
    for (const p of dashboard.panels.filter((p) => p.type !== "row")) expect(p.datasource?.uid, p.title).toBe("${datasource}");
    expect(dashboard.panels.some((p) => p.type === "heatmap")).toBe(true);
  });

  it("every expression parses (lezer-promql) and names only metrics our processes or vLLM export", () => {
    const exprs = [...dashboardExpressions(), ...ruleExpressions()];
    expect(exprs.length).toBeGreaterThan(40);
    const unknown: string[] = [];
    let vllm = 0;
    for (const { where, expr } of exprs) {
      const names = metricNames(expr);
      expect(names.length, `${where}: ${expr}`).toBeGreaterThan(0);
      for (const n of names) {
        if (!known.has(n)) unknown.push(`${where}: ${n}`);
        if (n.startsWith("vllm:")) vllm++;
      }
    }
    expect(unknown).toEqual([]);
    expect(vllm).toBeGreaterThan(0);
  });

  it("catches a misspelt metric and a syntax error (the check can fail)", () => {
    expect(metricNames("rate(udm_records_comitted_total[5m])").every((n) => known.has(n))).toBe(false);
    expect(() => metricNames("sum(rate(udm_records_committed_total[5m])")).toThrow(/syntax error/);
  });

  const mode = toolTestMode(["promtool"], "prometheus");
  it.skipIf(mode === "skip")("promtool accepts the rules, the scrape config and every dashboard expression", () => {
    expect(mode, "promtool missing under CI=true: .ci/run must install Debian's prometheus").toBe("run");
    const rules = spawnSync("promtool", ["check", "rules", RULES], { encoding: "utf8" });
    expect(rules.status, rules.stdout + rules.stderr).toBe(0);
    const config = spawnSync("promtool", ["check", "config", "--syntax-only", SCRAPE], { encoding: "utf8" });
    expect(config.status, config.stdout + config.stderr).toBe(0);
    // Prometheus's own parser reads the dashboard's expressions as recording rules.
    const dir = mkdtempSync(join(tmpdir(), "udm-promql-"));
    const file = join(dir, "dashboard-rules.yml");
    const body = dashboardExpressions()
      .map((e, i) => `      - record: udm_dashboard_expr_${i}\n        expr: ${JSON.stringify(e.expr)}`)
      .join("\n");
    writeFileSync(file, `groups:\n  - name: dashboard\n    rules:\n${body}\n`);
    const dash = spawnSync("promtool", ["check", "rules", file], { encoding: "utf8" });
    expect(dash.status, dash.stdout + dash.stderr).toBe(0);
    const bad = join(dir, "bad.yml");
    writeFileSync(bad, `groups:\n  - name: bad\n    rules:\n      - record: x\n        expr: "sum(rate(udm_records_committed_total[5m])"\n`);
    expect(spawnSync("promtool", ["check", "rules", bad], { encoding: "utf8" }).status).not.toBe(0);
  });

  it.skipIf(mode === "skip")("UdmRunStalled fires for a run that never commits and for one that stopped committing, not for one that commits (promtool test rules)", () => {
    expect(mode, "promtool missing under CI=true: .ci/run must install Debian's prometheus").toBe("run");
    const stalled = (parse(readFileSync(RULES, "utf8")) as { groups: Array<{ rules: Array<{ alert?: string; annotations?: Record<string, string> }> }> }).groups
      .flatMap((g) => g.rules)
      .find((r) => r.alert === "UdmRunStalled")!;
    const minutes = 31;
    const series = (name: string, instance: string, values: string, extra = "") =>
      `      - series: '${name}{instance="${instance}",job="udm-coordinator"${extra}}'\n        values: '${values}'`;
    // A coordinator exports NaN for the last commit until it commits (coordinator-metrics.ts).
    const nan = Array.from({ length: minutes }, () => "NaN").join(" ");
    const run = (instance: string, lastCommit: string) =>
      [
        series("udm_run_state", instance, `1x${minutes - 1}`, ',state="running"'),
        series("udm_run_start_timestamp_seconds", instance, `0x${minutes - 1}`),
        series("udm_run_last_commit_timestamp_seconds", instance, lastCommit),
      ].join("\n");
    const expected = (instance: string) => {
      const annotations = Object.entries(stalled.annotations ?? {})
        .map(([k, v]) => `              ${k}: ${JSON.stringify(v.replaceAll("{{ $labels.instance }}", instance))}`)
        .join("\n");
      return `          - exp_labels: { instance: "${instance}", job: udm-coordinator, state: running, severity: warning }\n            exp_annotations:\n${annotations}`;
    };
    const dir = mkdtempSync(join(tmpdir(), "udm-promtool-test-"));
    const file = join(dir, "stalled-test.yml");
    writeFileSync(
      file,
      [
        `rule_files:\n  - ${JSON.stringify(RULES)}`,
        "evaluation_interval: 1m",
        "tests:\n  - interval: 1m\n    input_series:",
        run("never-committed:9470", nan),
        // Committed in its first two minutes, then nothing (the gauge holds the last commit's time).
        run("stopped:9470", `0 60 120x${minutes - 3}`),
        run("committing:9470", `0+60x${minutes - 1}`),
        "    alert_rule_test:",
        "      - eval_time: 12m\n        alertname: UdmRunStalled",
        "      - eval_time: 20m\n        alertname: UdmRunStalled\n        exp_alerts:",
        expected("never-committed:9470"),
        expected("stopped:9470"),
      ].join("\n") + "\n",
    );
    const r = spawnSync("promtool", ["test", "rules", file], { encoding: "utf8" });
    expect(r.status, r.stdout + r.stderr).toBe(0);
  });

  it.skipIf(mode === "skip")("UdmMetricsDown is quiet for a completed run whose process is gone, fires for one that disappeared while running (promtool test rules)", () => {
    expect(mode, "promtool missing under CI=true: .ci/run must install Debian's prometheus").toBe("run");
    const down = (parse(readFileSync(RULES, "utf8")) as { groups: Array<{ rules: Array<{ alert?: string; annotations?: Record<string, string> }> }> }).groups
      .flatMap((g) => g.rules)
      .find((r) => r.alert === "UdmMetricsDown")!;
    // Scraped for 3 minutes, then gone (`_`: no sample) for 20.
    const series = (name: string, job: string, instance: string, values: string, extra = "") =>
      `      - series: '${name}{instance="${instance}",job="${job}"${extra}}'\n        values: '${values}'`;
    const gone = "_x20";
    const coordinator = (instance: string, last: "complete" | "running") =>
      [
        series("up", "udm-coordinator", instance, "1 1 1 0x20"),
        series("udm_run_state", "udm-coordinator", instance, `1 1 ${last === "running" ? 1 : 0} ${gone}`, ',state="running"'),
        series("udm_run_state", "udm-coordinator", instance, `0 0 ${last === "complete" ? 1 : 0} ${gone}`, ',state="complete"'),
      ].join("\n");
    const scorer = (instance: string, scored: number) =>
      [
        series("up", "udm-scorer", instance, "1 1 1 0x20"),
        series("udm_scorer_tracks_scored", "udm-scorer", instance, `0 1 ${scored} ${gone}`),
        series("udm_scorer_tracks", "udm-scorer", instance, `3 3 3 ${gone}`),
      ].join("\n");
    const expected = (job: string, instance: string) => {
      const annotations = Object.entries(down.annotations ?? {})
        .map(([k, v]) => `              ${k}: ${JSON.stringify(v.replaceAll("{{ $labels.instance }}", instance).replaceAll("{{ $labels.job }}", job))}`)
        .join("\n");
      return `          - exp_labels: { instance: "${instance}", job: ${job}, severity: warning }\n            exp_annotations:\n${annotations}`;
    };
    const dir = mkdtempSync(join(tmpdir(), "udm-promtool-test-"));
    const file = join(dir, "down-test.yml");
    writeFileSync(
      file,
      [
        `rule_files:\n  - ${JSON.stringify(RULES)}`,
        "evaluation_interval: 1m",
        "tests:\n  - interval: 1m\n    input_series:",
        coordinator("complete:9470", "complete"),
        coordinator("vanished:9470", "running"),
        scorer("scored:9471", 3),
        scorer("unscored:9471", 2),
        "    alert_rule_test:",
        "      - eval_time: 10m\n        alertname: UdmMetricsDown\n        exp_alerts:",
        expected("udm-coordinator", "vanished:9470"),
        expected("udm-scorer", "unscored:9471"),
      ].join("\n") + "\n",
    );
    const r = spawnSync("promtool", ["test", "rules", file], { encoding: "utf8" });
    expect(r.status, r.stdout + r.stderr + readFileSync(file, "utf8")).toBe(0);
  });
});
