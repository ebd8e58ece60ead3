/**
 * What a container of a rendered pod template gets, worked out as the kubelet does: its
 * environment (ConfigMaps in `envFrom`, then `env` in order, with `$(VAR)` references to
 * earlier variables and the downward API's pod name and labels) and its arguments.
 */

/** The parts of a Kubernetes object these checks read. */
export interface K8sObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  readonly spec?: Record<string, unknown>;
  readonly data?: Record<string, string>;
}

export interface EnvVar {
  readonly name: string;
  readonly value?: string;
  readonly valueFrom?: {
    fieldRef?: { fieldPath: string };
    configMapKeyRef?: { name: string; key: string };
  };
}

export interface Container {
  readonly name: string;
  readonly image: string;
  readonly args?: string[];
  readonly env?: EnvVar[];
  readonly envFrom?: { configMapRef?: { name: string } }[];
  readonly ports?: { name: string; containerPort: number }[];
  readonly volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
  readonly [key: string]: unknown;
}

/** The pod a template makes: its name (a StatefulSet's first ordinal, or any name) and labels. */
export interface PodIdentity {
  readonly name: string;
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
}

function configMap(objects: readonly K8sObject[], name: string): Record<string, string> {
  const cm = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === name);
  if (cm === undefined) throw new Error(`ConfigMap ${name}: referenced, but not in the rendered objects`);
  return cm.data ?? {};
}

function fieldValue(pod: PodIdentity, path: string): string {
  if (path === 'metadata.name') return pod.name;
  if (path === 'metadata.namespace') return pod.namespace;
  const label = /^metadata\.labels\['([^']+)'\]$/.exec(path)?.[1];
  if (label !== undefined) {
    const v = pod.labels[label];
    if (v === undefined) throw new Error(`fieldRef ${path}: the pod has no label ${label}`);
    return v;
  }
  throw new Error(`fieldRef ${path}: not one these checks know`);
}

/** The container's environment as the kubelet builds it. */
export function containerEnv(
  container: Container,
  pod: PodIdentity,
  objects: readonly K8sObject[],
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const from of container.envFrom ?? []) {
    if (from.configMapRef !== undefined) Object.assign(env, configMap(objects, from.configMapRef.name));
  }
  for (const e of container.env ?? []) {
    if (e.value !== undefined) {
      // $(VAR) names a variable defined before; an unknown one stays as written.
      env[e.name] = e.value.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (all, v: string) => env[v] ?? all);
    } else if (e.valueFrom?.fieldRef !== undefined) {
      env[e.name] = fieldValue(pod, e.valueFrom.fieldRef.fieldPath);
    } else if (e.valueFrom?.configMapKeyRef !== undefined) {
      const { name, key } = e.valueFrom.configMapKeyRef;
      const v = configMap(objects, name)[key];
      if (v === undefined) throw new Error(`env ${e.name}: ConfigMap ${name} has no key ${key}`);
      env[e.name] = v;
    } else {
      env[e.name] = '';
    }
  }
  return env;
}
