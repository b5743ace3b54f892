// The engine an agent runs itself (--vllm-cmd): a VllmSupervisor over the command. With {model}
// in the command it is a template: the engine is (re)started with the model each run names (a
// sweep), and not started until a model is known (the agent is not ready meanwhile). The model
// reaches the command through UDM_ENGINE_MODEL, never as shell text (agent/model-template.ts);
// a run whose model is not a model id is refused: its engine is stopped, not started.
import type { Logger } from "../common/log.js";
import { modelNameProblem } from "../common/engine-protocol/index.js";
import { UsageError } from "../common/errors.js";
import { fillModelTemplate, MODEL_ENV, MODEL_PLACEHOLDER } from "./model-template.js";
import { VllmSupervisor } from "./vllm-supervisor.js";

/** vLLM's environment variable for its API key: kept off the command line and out of `ps`. */
export const ENGINE_API_KEY_ENV = "VLLM_API_KEY";

export class EngineProcess {
  private readonly supervisor: VllmSupervisor;
  private readonly template: string | undefined;
  private servedModel: string | undefined;

  /** Starts the command now, unless it is a template and no model is known yet; a UsageError for a --model that is no model id. */
  /** `apiKey` (--engine-api-key) reaches the engine as VLLM_API_KEY, which vLLM reads when its command has no --api-key (vllm/entrypoints/openai/api_server.py, build_app). */
  constructor(command: string, model: string | undefined, engineUrl: string, private readonly logger: Logger, apiKey?: string) {
    this.template = command.includes(MODEL_PLACEHOLDER) ? fillModelTemplate(command) : undefined;
    const problem = this.template && model ? modelNameProblem(model) : undefined;
    if (problem) throw new UsageError(`--model: ${problem}; with a {model} template in --vllm-cmd it must be a model id`);
    this.servedModel = this.template ? model || undefined : undefined;
    this.supervisor = new VllmSupervisor({ command: this.template ?? command, healthUrl: `${engineUrl}/health`, logger, extraEnv: this.modelEnv(), ...(apiKey ? { secretEnv: { [ENGINE_API_KEY_ENV]: apiKey } } : {}) });
    if (!this.template || this.servedModel) this.supervisor.start();
  }

  /** Whether the engine serves whatever model a run names (the method then asks for no model). */
  get followsRunModel(): boolean {
    return this.template !== undefined;
  }

  /** Engine child processes started (1 + restarts). */
  get starts(): number {
    return this.supervisor.starts;
  }

  /** A run names `model`: a template restarts the engine with it when it serves another. */
  useModel(model: string): void {
    if (!this.template || !model || model === this.servedModel) return;
    if (!this.acceptable(model)) {
      // The engine of the previous model must not answer for this run: stop it, the agent is not ready.
      this.servedModel = undefined;
      void this.supervisor.restartWith(undefined);
      return;
    }
    this.logger.info("the run names another model: restarting the engine with it", { from: this.servedModel ?? "(none)", to: model });
    this.servedModel = model;
    void this.supervisor.restartWith(this.template, this.modelEnv());
  }

  stop(): Promise<void> {
    return this.supervisor.stop();
  }

  private acceptable(model: string): boolean {
    const problem = modelNameProblem(model);
    if (problem) this.logger.error(`refusing the run's model, the engine is not started with it: ${problem}`);
    return problem === undefined;
  }

  private modelEnv(): Record<string, string> {
    return this.servedModel !== undefined ? { [MODEL_ENV]: this.servedModel } : {};
  }
}
