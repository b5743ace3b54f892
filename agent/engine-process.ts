// The engine an agent runs itself (--vllm-cmd): a VllmSupervisor over the command. With {model}
// in the command it is a template: the engine is (re)started with the model each run names (a
// sweep), and not started until a model is known (the agent is not ready meanwhile).
import type { Logger } from "../common/log.js";
import { VllmSupervisor } from "./vllm-supervisor.js";

const MODEL_PLACEHOLDER = "{model}";

/** The template with {model} replaced by the model name, quoted for the shell. */
export function fillModel(template: string, model: string): string {
  return template.split(MODEL_PLACEHOLDER).join(`'${model.replace(/'/g, `'\\''`)}'`);
}

export class EngineProcess {
  private readonly supervisor: VllmSupervisor;
  private readonly template: string | undefined;
  private servedModel: string | undefined;

  /** Starts the command now, unless it is a template and no model is known yet. */
  constructor(command: string, model: string | undefined, engineUrl: string, private readonly logger: Logger) {
    this.template = command.includes(MODEL_PLACEHOLDER) ? command : undefined;
    this.servedModel = this.template ? model : undefined;
    this.supervisor = new VllmSupervisor({ command: this.template ? fillModel(this.template, this.servedModel ?? "") : command, healthUrl: `${engineUrl}/health`, logger });
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
    this.logger.info("the run names another model: restarting the engine with it", { from: this.servedModel ?? "(none)", to: model });
    this.servedModel = model;
    void this.supervisor.restartWith(fillModel(this.template, model));
  }

  stop(): Promise<void> {
    return this.supervisor.stop();
  }
}
