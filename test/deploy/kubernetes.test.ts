/**
 * deploy/k8s, checked offline: kustomize renders the base and every region's overlay,
 * kubernetes-validate (schemas bundled, strict: an unknown field is an error) accepts every
 * rendered object for the oldest and newest Kubernetes we claim, and a broken manifest is
 * refused. Then what no schema knows: each container's flags and environment are accepted by
 * its role's own option parser (with the genesis from the rendered ConfigMap), the storage
 * groups cover the shards as config/topology.json says, every pod and address list agrees
 * with the objects around it, and the regions name each other as peers.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parseTopology, type Role, roleEnv, roleNodeArgs, shardGroups } from '@monsoon/cli';
import { ShardLayout } from '@monsoon/protocol';
import { AccountSet, buildGenesis } from '@monsoon/workload';
import {
  INSTALL_TIMEOUT_MS,
  installDeployTools,
  parseYamlStream,
  ROOT,
  run,
  runOk,
  TOOL,
} from './deployTools.js';
import { type Container, containerEnv, type K8sObject } from './podEnvironment.js';
import { loadRole, roleEnvNames, roleSpec } from './roleLoad.js';

const REGIONS = ['us-east', 'us-west', 'eu-west', 'ap-northeast'];
/** The oldest Kubernetes the manifests are held to, and the newest the validator knows. */
const KUBERNETES_VERSIONS = ['1.30.0', '1.37.0'];
const K8S = join(ROOT, 'deploy', 'k8s');

const scratch = mkdtempSync(join(tmpdir(), 'monsoon-k8s-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Rendered {
  readonly file: string;
  readonly objects: K8sObject[];
}
const rendered = new Map<string, Rendered>();

/** `kustomize build dir`, saved to a file for the validator, and parsed. */
function render(name: string, dir: string): Rendered {
  const text = runOk(TOOL.kustomize, ['build', dir]);
  const file = join(scratch, `${name}.yaml`);
  writeFileSync(file, text);
  return { file, objects: parseYamlStream(text) as K8sObject[] };
}

function validate(file: string, version: string) {
  return run(TOOL.kubernetesValidate, ['--strict', '--quiet', '-k', version, file]);
}

beforeAll(() => {
  installDeployTools();
  for (const r of REGIONS) rendered.set(r, render(r, join(K8S, 'overlays', r)));
}, INSTALL_TIMEOUT_MS);

type Workload = K8sObject & {
  spec: {
    replicas: number;
    serviceName?: string;
    selector: { matchLabels: Record<string, string> };
    template: {
      metadata: { labels: Record<string, string> };
      spec: {
        securityContext?: Record<string, unknown> & { seccompProfile?: { type: string } };
        containers: Container[];
        volumes?: { name: string; configMap?: { name: string } }[];
      };
    };
    volumeClaimTemplates?: { metadata: { name: string } }[];
  };
};

const isWorkload = (o: K8sObject): o is Workload => o.kind === 'StatefulSet' || o.kind === 'Deployment';
const component = (o: K8sObject) => o.metadata.labels?.['app.kubernetes.io/component'];
const selects = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.entries(selector).every(([k, v]) => labels[k] === v);
const byKind = (objects: readonly K8sObject[], kind: string) => objects.filter((o) => o.kind === kind);
function configMapData(objects: readonly K8sObject[], prefix: string): Record<string, string> {
  const cm = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith(prefix));
  if (cm?.data === undefined) throw new Error(`ConfigMap ${prefix}*: not rendered`);
  return cm.data;
}
const flagValue = (args: readonly string[], flag: string) => {
  const i = args.indexOf(flag);
  return i < 0 ? undefined : args[i + 1];
};
const port = (hostPort: string) => Number(hostPort.slice(hostPort.lastIndexOf(':') + 1));

describe('kustomize and the schemas', () => {
  it('renders the base on its own, and it validates', () => {
    const base = render('base', join(K8S, 'base'));
    expect(base.objects.length).toBeGreaterThan(10);
    const r = validate(base.file, KUBERNETES_VERSIONS.at(-1)!);
    expect(r.stderr + r.stdout).toBe('');
    expect(r.status).toBe(0);
  });

  it.each(REGIONS)('%s: every rendered object is valid for each Kubernetes version, strictly', (region) => {
    const { file, objects } = rendered.get(region)!;
    expect(objects.map((o) => o.kind)).toEqual(
      expect.arrayContaining([
        'Namespace',
        'ConfigMap',
        'Service',
        'StatefulSet',
        'Deployment',
        'PodDisruptionBudget',
      ]),
    );
    for (const version of KUBERNETES_VERSIONS) {
      const r = validate(file, version);
      expect([version, r.stderr + r.stdout]).toEqual([version, '']);
      expect(r.status).toBe(0);
    }
  });

  it('refuses a broken manifest: a field of the wrong type, and a field that does not exist', () => {
    const overlay = join(scratch, 'broken');
    mkdirSync(overlay);
    const patch = (ops: string) => {
      writeFileSync(
        join(overlay, 'kustomization.yaml'),
        [
          'resources:',
          `  - ${relative(overlay, join(K8S, 'overlays', 'us-east'))}`,
          'patches:',
          '  - target: {kind: StatefulSet, name: storage-0-3}',
          '    patch: |-',
          ...ops.split('\n').map((l) => `      ${l}`),
        ].join('\n'),
      );
      const broken = render('broken', overlay);
      return validate(broken.file, KUBERNETES_VERSIONS.at(-1)!);
    };
    const wrongType = patch('- op: replace\n  path: /spec/replicas\n  value: two');
    expect(wrongType.status).not.toBe(0);
    expect(wrongType.stdout + wrongType.stderr).toMatch(
      /statefulset\/storage-0-3.*spec\.replicas: 'two' is not of type 'integer'/,
    );
    const unknownField = patch(
      '- op: add\n  path: /spec/template/spec/containers/0/readinessProbe/httpGet/pathh\n  value: /readyz',
    );
    expect(unknownField.status).not.toBe(0);
    expect(unknownField.stdout + unknownField.stderr).toMatch(/'pathh' was unexpected/);
  });
});

describe.each(REGIONS)('region %s', (region) => {
  const objects = () => rendered.get(region)!.objects;
  const workloads = () => objects().filter(isWorkload);
  const topology = () =>
    parseTopology(JSON.parse(configMapData(objects(), 'monsoon-config-')['topology.json']!));

  it('runs every pod non-root, unprivileged, read-only, with probes, requests and limits', () => {
    expect(
      workloads()
        .map((w) => component(w))
        .sort(),
    ).toEqual(['client', 'miner', 'storage', 'storage', 'storage', 'storage']);
    for (const w of workloads()) {
      const pod = w.spec.template.spec;
      expect([w.metadata.name, pod.securityContext]).toEqual([
        w.metadata.name,
        expect.objectContaining({
          runAsNonRoot: true,
          runAsUser: expect.any(Number),
          seccompProfile: { type: 'RuntimeDefault' },
        }),
      ]);
      expect(pod.securityContext!.runAsUser).toBeGreaterThan(0);
      for (const c of pod.containers) {
        const where = `${w.metadata.name}/${c.name}`;
        expect([where, c.securityContext]).toEqual([
          where,
          { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
        ]);
        // The image the overlay names, never the bare name of the base.
        expect(c.image).toMatch(/^[^/]+\/[^:]+:[\w.-]+$/);
        const resources = c.resources as Record<string, Record<string, string>>;
        for (const kind of ['requests', 'limits']) {
          expect([where, kind, Object.keys(resources[kind] ?? {}).sort()]).toEqual([
            where,
            kind,
            ['cpu', 'memory'],
          ]);
        }
        // Probes ask the role's metrics server, on the port its --metrics flag binds.
        const metrics = c.ports!.find((p) => p.name === 'metrics')!;
        expect(port(flagValue(c.args!, '--metrics')!)).toBe(metrics.containerPort);
        for (const [probe, path] of [
          ['startupProbe', '/healthz'],
          ['livenessProbe', '/healthz'],
          ['readinessProbe', '/readyz'],
        ] as const) {
          expect([where, probe, (c[probe] as { httpGet: unknown }).httpGet]).toEqual([
            where,
            probe,
            { path, port: 'metrics' },
          ]);
        }
      }
    }
  });

  it('gives every workload a disruption budget and every Service pods of exactly one workload', () => {
    const pods = workloads().map((w) => ({ name: w.metadata.name, labels: w.spec.template.metadata.labels }));
    const owners = (selector: Record<string, string>) =>
      pods.filter((p) => selects(selector, p.labels)).map((p) => p.name);
    for (const w of workloads()) expect(owners(w.spec.selector.matchLabels)).toEqual([w.metadata.name]);
    const budgets = byKind(objects(), 'PodDisruptionBudget').map((b) =>
      owners((b.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels),
    );
    expect(budgets.map((o) => o.length)).toEqual(budgets.map(() => 1));
    expect(budgets.flat().sort()).toEqual(pods.map((p) => p.name).sort());
    for (const s of byKind(objects(), 'Service')) {
      const spec = s.spec as { selector: Record<string, string>; ports: { targetPort: string }[] };
      const [owner] = owners(spec.selector);
      expect([s.metadata.name, owners(spec.selector).length]).toEqual([s.metadata.name, 1]);
      const w = workloads().find((x) => x.metadata.name === owner)!;
      const named = w.spec.template.spec.containers.flatMap((c) => (c.ports ?? []).map((p) => p.name));
      for (const p of spec.ports) expect(named).toContain(p.targetPort);
    }
  });

  it('holds the shards as config/topology.json says: one StatefulSet, headless Service and volume per group', () => {
    const t = topology();
    const storage = workloads().filter((w) => component(w) === 'storage');
    const groups = storage.map((s) => s.spec.template.metadata.labels['monsoon/shards']);
    expect(groups).toEqual(
      expect.arrayContaining(shardGroups(t.shardCount, t.storage.processes / t.storage.replicas)),
    );
    expect(groups).toHaveLength(t.storage.processes / t.storage.replicas);
    const layout = new ShardLayout(t.shardCount);
    expect(groups.flatMap((g) => layout.parse(g!)).sort((a, b) => a - b)).toEqual([
      ...Array(t.shardCount).keys(),
    ]);
    for (const s of storage) {
      expect([s.metadata.name, s.kind, s.spec.replicas]).toEqual([
        s.metadata.name,
        'StatefulSet',
        t.storage.replicas,
      ]);
      const headless = byKind(objects(), 'Service').find((x) => x.metadata.name === s.spec.serviceName);
      expect((headless?.spec as { clusterIP?: string } | undefined)?.clusterIP).toBe('None');
      // The write-ahead log and checkpoints live on the claim, mounted where --data-dir points.
      const c = s.spec.template.spec.containers[0]!;
      const claim = s.spec.volumeClaimTemplates?.map((v) => v.metadata.name) ?? [];
      const dataMount = c.volumeMounts!.find((m) => m.mountPath === flagValue(c.args!, '--data-dir'));
      expect(claim).toContain(dataMount?.name);
    }
    const count = (c: string) => workloads().find((w) => component(w) === c)!.spec.replicas;
    expect([count('miner'), count('client')]).toEqual([t.miners.count, t.clients.count]);
  });

  it('lists every storage pod and the miner pod in the addresses the roles get, with the topology’s settings', () => {
    const t = topology();
    const net = configMapData(objects(), 'monsoon-network-');
    const podAddresses = (c: string, portName: string) =>
      workloads()
        .filter((w) => component(w) === c)
        .flatMap((w) => {
          const p = w.spec.template.spec.containers[0]!.ports!.find((x) => x.name === portName)!;
          return Array.from(
            { length: w.spec.replicas },
            (_, i) => `${w.metadata.name}-${i}.${w.spec.serviceName}:${p.containerPort}`,
          );
        });
    expect(net.MONSOON_STORAGE!.split(',').sort()).toEqual(podAddresses('storage', 'grpc').sort());
    expect(net.MONSOON_MINERS!.split(',')).toEqual(podAddresses('miner', 'grpc'));
    expect(net).toMatchObject({
      MONSOON_SHARD_COUNT: String(t.shardCount),
      MONSOON_FSYNC: t.storage.fsync,
      MONSOON_RETENTION: String(t.miners.retention),
      MONSOON_COMPACT_LEVELS: String(t.miners.retention),
      MONSOON_BLOCK_INTERVAL: String(t.miners.blockIntervalMs),
      MONSOON_DIFFICULTY: String(t.miners.difficulty),
    });
  });

  it('starts every container with flags and environment its role accepts, and nothing it would ignore', async () => {
    const etc = join(scratch, region, 'etc');
    mkdirSync(etc, { recursive: true });
    for (const w of workloads()) {
      const pod = w.spec.template.spec;
      for (const c of pod.containers) {
        const where = `${w.metadata.name}/${c.name}`;
        // The ConfigMap volumes as the pod sees them, written out for the role to read.
        const remap: [string, string][] = [];
        for (const m of c.volumeMounts ?? []) {
          const cm = pod.volumes?.find((v) => v.name === m.name)?.configMap;
          if (cm === undefined) continue;
          const dir = join(etc, `${w.metadata.name}-${m.name}`);
          mkdirSync(dir, { recursive: true });
          for (const [k, v] of Object.entries(configMapData(objects(), cm.name)))
            writeFileSync(join(dir, k), v);
          remap.push([m.mountPath, dir]);
        }
        const local = (v: string) => remap.reduce((s, [from, to]) => s.replace(from, to), v);
        const env = containerEnv(
          c,
          { name: `${w.metadata.name}-0`, namespace: 'monsoon', labels: w.spec.template.metadata.labels },
          objects(),
        );
        const [role, ...argv] = c.args!;
        // The image's entrypoint with the V8 flags the local cluster starts this role with.
        expect([where, c.command]).toEqual([
          where,
          ['node', ...roleNodeArgs(role as Role, argv), 'packages/cli/dist/cli/monsoon.js', 'node'],
        ]);
        // glibc's malloc settings the local cluster starts this role with (a tiered storage node's).
        const malloc = Object.fromEntries(Object.entries(env).filter(([k]) => k.startsWith('MALLOC_')));
        expect([where, malloc]).toEqual([where, roleEnv(role as Role, 0, argv)]);
        const spec = roleSpec(role);
        // Variables set on the container itself are this role's; shared ones some role's.
        const own = roleEnvNames(spec);
        for (const e of c.env ?? []) {
          if (e.name.startsWith('MONSOON_'))
            expect([where, e.name, own.has(e.name)]).toEqual([where, e.name, true]);
        }
        const loaded = await loadRole(
          spec,
          argv.map(local),
          Object.fromEntries(Object.entries(env).map(([k, v]) => [k, local(v)])),
        );
        expect(loaded.config).toBeDefined();
        const ports = new Map(c.ports!.map((p) => [p.containerPort, p.name]));
        for (const flag of ['--listen', '--rpc', '--grpc', '--metrics']) {
          const v = flagValue(argv, flag);
          if (v !== undefined) expect([where, flag, ports.has(port(v))]).toEqual([where, flag, true]);
        }
        // Peers reach the pod where it says: its own name under its Service, or the region's public name.
        if (loaded.advertise !== undefined) {
          expect(ports.get(port(loaded.advertise))).toBe('grpc');
        }
      }
    }
    const readers = new Set(
      workloads().flatMap((w) => [...roleEnvNames(roleSpec(w.spec.template.spec.containers[0]!.args![0]))]),
    );
    for (const key of Object.keys(configMapData(objects(), 'monsoon-network-'))) {
      expect([key, readers.has(key)]).toEqual([key, true]);
    }
  });

  it('ships the genesis the workload generates for the topology’s seed and accounts', async () => {
    const t = topology();
    const accounts = await AccountSet.create({
      seed: new TextEncoder().encode(t.seed),
      count: t.accounts,
      workers: 0,
    });
    const shipped = JSON.parse(configMapData(objects(), 'monsoon-config-')['genesis.json']!);
    // On a mismatch, write buildGenesis(...) to deploy/k8s/base/config/genesis.json again (deploy/README.md).
    expect(shipped).toEqual(JSON.parse(JSON.stringify(buildGenesis(accounts))));
  });

  it('labels every object with its region', () => {
    for (const o of objects())
      expect([o.metadata.name, o.metadata.labels?.['monsoon/region']]).toEqual([o.metadata.name, region]);
  });
});

describe('the regions together', () => {
  const minerEnv = (region: string) => {
    const miner = rendered
      .get(region)!
      .objects.filter(isWorkload)
      .find((w) => component(w) === 'miner')!;
    const env = Object.fromEntries(
      (miner.spec.template.spec.containers[0]!.env ?? []).map((e) => [e.name, e.value ?? '']),
    );
    const lb = rendered
      .get(region)!
      .objects.find((o) => o.kind === 'Service' && o.metadata.name === 'miner-public')!;
    return {
      advertise: env.MONSOON_ADVERTISE!,
      peers: env.MONSOON_PEERS!,
      lbHost: lb.metadata.annotations?.['external-dns.alpha.kubernetes.io/hostname'],
    };
  };

  it('gives each region’s miner a public name of its own and the other regions’ miners as peers', () => {
    const advertised = new Map(REGIONS.map((r) => [r, minerEnv(r).advertise]));
    expect(new Set(advertised.values()).size).toBe(REGIONS.length);
    for (const r of REGIONS) {
      const { advertise, peers, lbHost } = minerEnv(r);
      expect(advertise).toMatch(new RegExp(`\\b${r}\\b.*:60000$`));
      expect(lbHost).toBe(advertise.slice(0, advertise.lastIndexOf(':')));
      expect(peers.split(',').sort()).toEqual(
        REGIONS.filter((x) => x !== r)
          .map((x) => advertised.get(x))
          .sort(),
      );
    }
  });
});
