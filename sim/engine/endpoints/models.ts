// GET /v1/models: one ModelCard with max_model_len (vllm/entrypoints/openai/models/protocol.py).
import type { EngineContext } from "../context.js";

export function modelList(ctx: EngineContext): unknown {
  const { model, created, seed, maxModelLen } = ctx;
  return {
    object: "list",
    data: [
      {
        id: model,
        object: "model",
        created,
        owned_by: "udm-orch-sim",
        root: model,
        parent: null,
        max_model_len: maxModelLen,
        permission: [
          {
            id: `modelperm-${seed}`,
            object: "model_permission",
            created,
            allow_create_engine: false,
            allow_sampling: true,
            allow_logprobs: true,
            allow_search_indices: false,
            allow_view: true,
            allow_fine_tuning: false,
            organization: "*",
            group: null,
            is_blocking: false,
          },
        ],
      },
    ],
  };
}
