// GET /v1/models: the served model, its max_model_len, and the capacity the agent advertises.
import { firstIssue } from "../../common/parse.js";
import { ModelListSchema } from "../../common/engine-protocol/index.js";
import type { EngineInfo } from "../engine-method.js";
import { EngineProtocolError, requestJson } from "../engine-http.js";

export async function readEngineInfo(baseUrl: string, model: string | undefined, capacity: number, timeoutMs: number, signal?: AbortSignal): Promise<EngineInfo> {
  const url = `${baseUrl}/v1/models`;
  const parsed = ModelListSchema.safeParse(await requestJson(url, { method: "GET", timeoutMs, signal }));
  if (!parsed.success) {
    const { field, message } = firstIssue(parsed.error);
    throw new EngineProtocolError(url, `${field || "body"}: ${message}`);
  }
  const cards = parsed.data.data;
  const card = model ? cards.find((c) => c.id === model) : cards[0];
  if (!card) throw new EngineProtocolError(url, model ? `model ${JSON.stringify(model)} is not served (served: ${cards.map((c) => c.id).join(", ") || "none"})` : "no model served");
  // vLLM always reports max_model_len; 0 stands for "not reported".
  return { model: card.id, maxModelLen: card.max_model_len ?? 0, capacity };
}
