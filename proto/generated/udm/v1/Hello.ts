// Original file: proto/udm/v1/orchestrator.proto


export interface Hello {
  'agent_id'?: (string);
  /**
   * Model name as served by the engine (the `id` of /v1/models).
   */
  'model'?: (string);
  /**
   * Engine methods this agent can run: systemone, decisions, label-read.
   */
  'methods'?: (string)[];
  'max_model_len'?: (number);
  /**
   * Units the agent is able to hold at once.
   */
  'capacity'?: (number);
  'version'?: (string);
  /**
   * False while its engine is down (vLLM restarting): the coordinator sends it nothing.
   */
  'ready'?: (boolean);
  'engine_url'?: (string);
  /**
   * Random per agent process. A live agent_id is taken over only by a Hello with the same instance
   * (that process reconnecting); another process naming it is refused (ALREADY_EXISTS).
   */
  'instance'?: (string);
}

export interface Hello__Output {
  'agent_id': (string);
  /**
   * Model name as served by the engine (the `id` of /v1/models).
   */
  'model': (string);
  /**
   * Engine methods this agent can run: systemone, decisions, label-read.
   */
  'methods': (string)[];
  'max_model_len': (number);
  /**
   * Units the agent is able to hold at once.
   */
  'capacity': (number);
  'version': (string);
  /**
   * False while its engine is down (vLLM restarting): the coordinator sends it nothing.
   */
  'ready': (boolean);
  'engine_url': (string);
  /**
   * Random per agent process. A live agent_id is taken over only by a Hello with the same instance
   * (that process reconnecting); another process naming it is refused (ALREADY_EXISTS).
   */
  'instance': (string);
}
