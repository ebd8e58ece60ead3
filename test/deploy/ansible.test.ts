/**
 * deploy/ansible, checked offline with ansible-core: the playbook passes --syntax-check (and a
 * broken one does not), the inventory groups every host by region and by role with each
 * region's shards covered, and the systemd unit and options file rendered for every host from
 * the role's templates and variables are what `monsoon node <role> --config` accepts.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Role, roleEnv, roleNodeArgs } from '@monsoon/cli';
import { ShardLayout } from '@monsoon/protocol';
import { INSTALL_TIMEOUT_MS, installDeployTools, ROOT, run, runOk, TOOL } from './deployTools.js';
import { loadRole, roleSpec } from './roleLoad.js';

const ANSIBLE = join(ROOT, 'deploy', 'ansible');
const INVENTORY = join(ANSIBLE, 'inventory.yml');
const REGION_GROUPS = ['us_east', 'us_west', 'eu_west', 'ap_northeast'];
const ROLE_GROUPS = { storage: 'storage', miners: 'miner', clients: 'client' } as const;
/** Where the playbook puts the genesis (group_vars: monsoon_etc), and the file it copies there. */
const ETC = '/etc/monsoon';
const GENESIS_SRC = join(ROOT, 'deploy', 'k8s', 'base', 'config', 'genesis.json');

const scratch = mkdtempSync(join(tmpdir(), 'monsoon-ansible-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Inventory {
  _meta: { hostvars: Record<string, Record<string, unknown>> };
  [group: string]: { hosts?: string[]; children?: string[] } | Inventory['_meta'];
}

interface RenderedHost {
  role: string;
  unit: string;
  /** The unit had its options file named the tiered backend. */
  unitTiered: string;
  config: string;
}

/** The MALLOC_* variables a systemd unit sets (`Environment=` lines). */
function mallocEnvOf(unit: string): Record<string, string> {
  return Object.fromEntries(
    unit
      .split('\n')
      .filter((l) => l.startsWith('Environment=MALLOC_'))
      .map((l) => l.slice('Environment='.length).split('=') as [string, string]),
  );
}

let inventory: Inventory;
const rendered = new Map<string, RenderedHost>();

beforeAll(() => {
  installDeployTools();
  inventory = JSON.parse(runOk(TOOL.ansibleInventory, ['-i', INVENTORY, '--list'])) as Inventory;
  // The tree callback saves each host's last result (the debug message) as JSON in a folder.
  const tree = join(scratch, 'tree');
  runOk(TOOL.ansiblePlaybook, ['-i', INVENTORY, join(ROOT, 'test', 'deploy', 'renderAnsible.yml')], {
    env: { ANSIBLE_CALLBACKS_ENABLED: 'ansible.builtin.tree', ANSIBLE_CALLBACK_TREE_DIR: tree },
  });
  for (const host of readdirSync(tree)) {
    rendered.set(host, (JSON.parse(readFileSync(join(tree, host), 'utf8')) as { msg: RenderedHost }).msg);
  }
}, INSTALL_TIMEOUT_MS);

/** The hosts of a group and of its children, each once. */
function hostsOf(group: string): string[] {
  const members = (name: string): string[] => {
    const g = inventory[name] as { hosts?: string[]; children?: string[] } | undefined;
    return [...(g?.hosts ?? []), ...(g?.children ?? []).flatMap(members)];
  };
  return [...new Set(members(group))].sort();
}

describe('playbook', () => {
  it('passes ansible-playbook --syntax-check', () => {
    const r = run(TOOL.ansiblePlaybook, ['-i', 'inventory.yml', '--syntax-check', 'site.yml'], {
      cwd: ANSIBLE,
    });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('is really checked: a task with two actions is refused', () => {
    const broken = join(scratch, 'broken.yml');
    writeFileSync(
      broken,
      '- hosts: all\n  tasks:\n    - name: Two at once\n      ansible.builtin.file: {path: /x}\n      ansible.builtin.copy: {dest: /x}\n',
    );
    const r = run(TOOL.ansiblePlaybook, ['-i', INVENTORY, '--syntax-check', broken]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/conflicting action statements/);
  });
  it('runs its preflight checks: no release archive, no deployment, and the message names the script', () => {
    const preflight = (extra: string[]) =>
      run(TOOL.ansiblePlaybook, ['-i', 'inventory.yml', 'site.yml', '--tags', 'preflight', ...extra], {
        cwd: ANSIBLE,
      });
    const missing = preflight(['-e', `monsoon_release_archive=${join(scratch, 'absent.tar.gz')}`]);
    expect(missing.status).not.toBe(0);
    expect(missing.stdout).toMatch(/absent\.tar\.gz: not found; make it with deploy\/build-release\.sh/);
    const archive = join(scratch, 'release.tar.gz');
    writeFileSync(archive, '');
    const present = preflight(['-e', `monsoon_release_archive=${archive}`]);
    expect(present.stdout).toMatch(/localhost\s+: ok=2 .*failed=0/);
    expect(present.status).toBe(0);
  });
});

describe('inventory', () => {
  it('puts every host in exactly one region and one role', () => {
    const all = hostsOf('all');
    expect(all.length).toBeGreaterThan(0);
    const count = (groups: readonly string[]) => (h: string) =>
      groups.filter((g) => hostsOf(g).includes(h)).length;
    expect(all.map(count(REGION_GROUPS))).toEqual(all.map(() => 1));
    expect(all.map(count(Object.keys(ROLE_GROUPS)))).toEqual(all.map(() => 1));
  });

  it.each(REGION_GROUPS)('%s: storage for every shard, a miner and a client', (region) => {
    const inRegion = (role: string) => hostsOf(role).filter((h) => hostsOf(region).includes(h));
    const layout = new ShardLayout(16);
    const shards = inRegion('storage').flatMap((h) =>
      layout.parse(String(inventory._meta.hostvars[h]!.monsoon_shards)),
    );
    expect(shards.sort((a, b) => a - b)).toEqual([...Array(16).keys()]);
    expect(inRegion('miners').length).toBeGreaterThanOrEqual(1);
    expect(inRegion('clients').length).toBeGreaterThanOrEqual(1);
  });
});

describe('rendered for every host', () => {
  const etc = join(scratch, 'etc');
  beforeAll(() => {
    mkdirSync(etc, { recursive: true });
    writeFileSync(join(etc, 'genesis.json'), readFileSync(GENESIS_SRC));
  });

  it('a systemd unit running its role from its options file, restarted on failure but not on a usage error', () => {
    expect([...rendered.keys()].sort()).toEqual(hostsOf('all'));
    for (const [host, r] of rendered) {
      const lines = r.unit.split('\n');
      const expectLine = (line: string | RegExp) =>
        expect([host, lines.some((l) => (typeof line === 'string' ? l === line : line.test(l)))]).toEqual([
          host,
          true,
        ]);
      // The V8 flags the local cluster starts this role with (its options file names no backend).
      const flags = roleNodeArgs(r.role as Role, [])
        .join(' ')
        .replaceAll('-', '\\-');
      expectLine(
        new RegExp(
          `^ExecStart=/\\S+/bin/node ${flags} packages/cli/dist/cli/monsoon\\.js node ${r.role} --config ${ETC}/${r.role}\\.json$`,
        ),
      );
      for (const l of [
        'Restart=on-failure',
        'RestartPreventExitStatus=2',
        'User=monsoon',
        'NoNewPrivileges=true',
      ]) {
        expectLine(l);
      }
      expectLine('WantedBy=multi-user.target');
      const config = JSON.parse(r.config) as Record<string, string>;
      // glibc's malloc settings, as the local cluster starts this role (a tiered storage node's own).
      const backend = (b: string | undefined) => (b === undefined ? [] : ['--backend', b]);
      expect([host, mallocEnvOf(r.unit)]).toEqual([
        host,
        roleEnv(r.role as Role, 0, backend(config.backend)),
      ]);
      expect([host, mallocEnvOf(r.unitTiered)]).toEqual([
        host,
        roleEnv(r.role as Role, 0, backend('tiered')),
      ]);
      // Only a storage node writes, and only to its data folder.
      expect([host, lines.filter((l) => l.startsWith('ReadWritePaths='))]).toEqual([
        host,
        r.role === 'storage' ? [`ReadWritePaths=${config.dataDir}`] : [],
      ]);
    }
  });

  it('an options file `monsoon node <role> --config` accepts, naming its region’s storage and miner and the other regions’ miners', async () => {
    for (const [host, r] of rendered) {
      const role = Object.entries(ROLE_GROUPS).find(([g]) => hostsOf(g).includes(host))![1];
      expect([host, r.role]).toEqual([host, role]);
      const region = REGION_GROUPS.find((g) => hostsOf(g).includes(host))!;
      const regional = (group: string, port: number) =>
        hostsOf(group)
          .filter((h) => hostsOf(region).includes(h))
          .map((h) => `${h}:${port}`);
      const doc = JSON.parse(r.config) as Record<string, unknown>;
      expect([host, doc.genesis]).toEqual([host, `${ETC}/genesis.json`]);
      const file = join(etc, `${host}.json`);
      writeFileSync(file, JSON.stringify({ ...doc, genesis: join(etc, 'genesis.json') }));
      const loaded = await loadRole(roleSpec(r.role), ['--config', file], {});
      // What a storage node or miner tells its peers is its own host name.
      if (role !== 'client')
        expect([host, loaded.advertise]).toEqual([host, `${host}:${role === 'miner' ? 60000 : 50051}`]);
      // Sorted: a second run writes the same file and restarts nothing.
      if (role !== 'storage')
        expect([host, doc.storage]).toEqual([host, regional('storage', 50051).join(',')]);
      if (role === 'client') expect([host, doc.miners]).toEqual([host, regional('miners', 60000).join(',')]);
      if (role === 'miner') {
        const others = hostsOf('miners').filter((h) => !hostsOf(region).includes(h));
        expect([host, doc.peers]).toEqual([host, others.map((h) => `${h}:60000`).join(',')]);
      }
    }
  });
});
