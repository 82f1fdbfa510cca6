/** The envelope every Kubernetes-style object shares; kinds narrow `spec`/`status`. */
export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  generation?: number;
  resourceVersion?: string;
  creationTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec?: unknown;
  status?: unknown;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  type?: string;
  [extra: string]: unknown;
}

/** Where an object came from, so every error can name its file and document. */
export interface ObjectOrigin {
  file: string;
  /** 0-based index of the YAML document in the file. */
  document: number;
  /** 1-based line where the document starts. */
  line: number;
}

export interface SourcedObject {
  object: KubeObject;
  origin?: ObjectOrigin;
}

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  observedGeneration?: number;
  /** Filled in by the status writer (kept when the condition did not change); the translator leaves it out so it stays pure. */
  lastTransitionTime?: string;
}

/** One object's status as the translator computed it. */
export interface ObjectStatus {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  status: Record<string, unknown>;
}
