// A model name as a run, a sweep or a Welcome names it. It reaches the shell command of an agent's
// --vllm-cmd template, so it is held to a model id's characters (Hugging Face ids, local paths,
// tags): never quotes, spaces, `$`, backticks or other shell syntax.
const MODEL_NAME = /^[A-Za-z0-9._\-/:@+]+$/;
export const MODEL_NAME_MAX = 256;
export const MODEL_NAME_RULE = `letters, digits and . _ - / : @ +, at most ${MODEL_NAME_MAX} characters`;

/** Why `name` is not a model name, or undefined when it is one. */
export function modelNameProblem(name: string): string | undefined {
  if (name.length === 0) return "the model name is empty";
  if (name.length > MODEL_NAME_MAX) return `the model name is ${name.length} characters long (${MODEL_NAME_RULE})`;
  if (!MODEL_NAME.test(name)) return `the model name ${JSON.stringify(name)} has characters a model id does not (${MODEL_NAME_RULE})`;
  return undefined;
}
