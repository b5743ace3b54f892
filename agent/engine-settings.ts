// Engine settings that cost a run accuracy or speed, as the engine shows them at startup: the
// max_model_len of /v1/models and the info gauge vllm:cache_config_info of /metrics (labels are
// the CacheConfig fields, enable_prefix_caching among them: vllm/v1/metrics/loggers.py
// PrometheusStatLogger.log_metrics_info). The agent warns once per engine; README "Running vLLM
// under the agent" says which flags to pass.
import type { Logger } from "../common/log.js";
import type { EngineInfo } from "./engine-method.js";
import { requestText } from "./engine-http.js";

/** Below this max_model_len the suite's long-state records do not fit and are skipped. */
export const RECOMMENDED_MIN_MODEL_LEN = 8192;

export interface CacheConfig {
  /** undefined: the gauge or the label is absent. */
  enablePrefixCaching: boolean | undefined;
}

/** The cache config from a Prometheus text exposition; undefined without vllm:cache_config_info. */
export function parseCacheConfig(metrics: string): CacheConfig | undefined {
  for (const line of metrics.split("\n")) {
    const m = /^vllm:cache_config_info\{(.*)\}\s/.exec(line.trim());
    if (!m) continue;
    const label = /(?:^|,)\s*enable_prefix_caching="([^"]*)"/.exec(m[1]!);
    const value = label?.[1]?.toLowerCase();
    return { enablePrefixCaching: value === "true" ? true : value === "false" ? false : undefined };
  }
  return undefined;
}

/** What the settings shown will cost, one sentence each. */
export function engineSettingWarnings(info: EngineInfo, cache: CacheConfig | undefined): string[] {
  const out: string[] = [];
  if (info.maxModelLen === 0) {
    out.push("/v1/models reports no max_model_len: a prompt that is too long costs a request and its 400 before it is skipped");
  } else if (info.maxModelLen < RECOMMENDED_MIN_MODEL_LEN) {
    out.push(`max_model_len is ${info.maxModelLen} (< ${RECOMMENDED_MIN_MODEL_LEN}): questions of records with longer prompts are skipped, not answered; start vLLM with --max-model-len ${RECOMMENDED_MIN_MODEL_LEN} or more`);
  }
  if (cache?.enablePrefixCaching === false) {
    out.push("prefix caching is off (vllm:cache_config_info enable_prefix_caching=False): every question prefills its record's state again; start vLLM with --enable-prefix-caching");
  }
  return out;
}

/** Reads /metrics once an engine is up and logs the warnings; once per model served. */
export class EngineSettingsCheck {
  private checked: string | undefined;

  constructor(
    private readonly baseUrl: string,
    private readonly logger: Logger | undefined,
  ) {}

  async check(info: EngineInfo, signal?: AbortSignal): Promise<string[]> {
    if (!this.logger || this.checked === info.model) return [];
    this.checked = info.model;
    let cache: CacheConfig | undefined;
    try {
      cache = parseCacheConfig(await requestText(`${this.baseUrl}/metrics`, { method: "GET", timeoutMs: 2_000, signal }));
    } catch {
      cache = undefined;
    }
    const warnings = engineSettingWarnings(info, cache);
    for (const w of warnings) this.logger.warn(`engine setting: ${w}`, { model: info.model });
    return warnings;
  }
}
