// Validates rendered Kubernetes objects against the Kubernetes and prometheus-operator schemas
// (kubernetes-models, @kubernetes-models/prometheus-operator), by apiVersion and kind.
import { parseAllDocuments } from "yaml";

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  spec?: any;
  data?: Record<string, string>;
}

/** Every document of a multi-document YAML stream (helm template's output), empty ones left out. */
export function parseManifests(text: string): K8sObject[] {
  const docs = parseAllDocuments(text);
  const out: K8sObject[] = [];
  for (const doc of docs) {
    if (doc.errors.length > 0) throw new Error(`YAML error: ${doc.errors.map((e) => e.message).join("; ")}`);
    const value = doc.toJS() as K8sObject | null;
    if (value !== null) out.push(value);
  }
  return out;
}

function modelModule(apiVersion: string): string {
  if (apiVersion.startsWith("monitoring.coreos.com/")) return `@kubernetes-models/prometheus-operator/${apiVersion}`;
  return `kubernetes-models/${apiVersion}`;
}

/** Throws, naming the object, when it does not match its kind's schema or the kind is unknown. */
export async function validateObject(obj: K8sObject): Promise<void> {
  const where = `${obj.kind}/${obj.metadata?.name ?? "?"}`;
  let mod: Record<string, unknown>;
  try {
    mod = (await import(modelModule(obj.apiVersion))) as Record<string, unknown>;
  } catch {
    throw new Error(`${where}: no schema for apiVersion ${obj.apiVersion}`);
  }
  const Model = mod[obj.kind] as (new (o: unknown) => { validate(): void }) | undefined;
  if (!Model) throw new Error(`${where}: no kind ${obj.kind} in ${obj.apiVersion}`);
  try {
    new Model(obj).validate();
  } catch (err) {
    throw new Error(`${where} does not match the ${obj.apiVersion} ${obj.kind} schema: ${(err as Error).message}`);
  }
}
