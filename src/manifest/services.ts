/**
 * The `services` section: development containers that `up` swaps in for a Deployment or
 * StatefulSet, with Okteto's field names and notations (sync "local:remote[:ro]", forward
 * "local:remote" or "local:service:remote", reverse "remote:local").
 */
import { splitShellwords } from '../compose/shellwords.ts';
import { formatPath, type Path } from '../yaml/errors.ts';
import { bool, int, keyValues, list, map, NAME_PATTERN, NAME_RULE, object, record, shapes, str, type Cursor, type Decoder } from './decode.ts';
import {
  DEFAULT_DEV_COMMAND,
  DEFAULT_VOLUME_SIZE,
  type DevService,
  type Forward,
  type Reverse,
  type SecurityContext,
  type SyncFolder,
  type SyncMode,
} from './model.ts';
import { SYNC_OUTSIDE_FIELD, syncRefusal } from './project-scope.ts';

function port(text: string): number | undefined {
  if (!/^\d{1,5}$/.test(text)) return undefined;
  const n = Number(text);
  return n >= 1 && n <= 65535 ? n : undefined;
}

const SYNC_MODES: Readonly<Record<string, SyncMode>> = { rw: 'two-way', ro: 'send-only' };

/** A sync entry and where it was written: whether it lies inside the project is judged with its service's opt-in. */
interface WrittenSync {
  readonly folder: SyncFolder;
  readonly at: Path;
}

const sync: Decoder<WrittenSync> = map(
  str({
    description:
      'LOCAL:REMOTE[:MODE]: a folder of the project (relative to the manifest folder) and an absolute path in the container. MODE rw (default): ' +
      'both ways; ro: sent to the container only, its changes there are never written back here.',
    examples: ['.:/app', './config:/etc/app:ro'],
    pattern: '^.+:/[^:]*(:(rw|ro))?$',
  }),
  (s, path, c) => {
    // The greedy LOCAL keeps a Windows local path ("C:\src") whole; REMOTE is absolute, so it starts with "/".
    const m = /^(.+):(\/[^:]*)(?::([^:]*))?$/.exec(s);
    if (!m)
      return c.fail(
        path,
        `must be LOCAL:REMOTE or LOCAL:REMOTE:MODE with an absolute remote path, such as ".:/app" or "./config:/etc/app:ro", not ${JSON.stringify(s)}`,
      );
    const [, local, remote, modeText = 'rw'] = m;
    const mode = Object.hasOwn(SYNC_MODES, modeText) ? SYNC_MODES[modeText] : undefined;
    if (!mode)
      return c.fail(
        path,
        `unknown mode ${JSON.stringify(modeText)} in ${JSON.stringify(s)}: use rw (both ways, the default) or ro (sent to the container only)`,
      );
    return { folder: { local: local!, remote: remote!, mode }, at: path };
  },
);

/** The service's sync folders, each inside the project unless the service opts out (project-scope.ts). */
function scopedSync(written: readonly WrittenSync[], allowOutside: boolean, service: Path, c: Cursor): SyncFolder[] | undefined {
  let ok = true;
  for (const { folder, at } of written) {
    const refusal = c.scope && syncRefusal(c.scope, folder.local, allowOutside);
    if (!refusal) continue;
    const optIn =
      refusal.kind === 'outside' ? `: set ${formatPath([...service, SYNC_OUTSIDE_FIELD])}: true to synchronize it anyway (docs/manifest.md#services)` : '';
    const resolved = refusal.resolved ? ` (which resolves to ${refusal.resolved})` : '';
    c.fail(at, `${folder.local}${resolved} ${refusal.reason}${optIn}`);
    ok = false;
  }
  return ok ? written.map((w) => w.folder) : undefined;
}

const forward: Decoder<Forward> = shapes(
  {
    number: map(int({ min: 1, max: 65535 }), (p) => ({ local: p, remote: p })),
    string: map(
      str({
        description: 'LOCAL:REMOTE, or LOCAL:SERVICE:REMOTE to reach another service.',
        examples: ['8080:8080', '5432:db:5432'],
        pattern: '^[0-9]{1,5}(:[^:]+)?:[0-9]{1,5}$',
      }),
      (s, path, c) => {
        const parts = s.split(':');
        const local = port(parts[0] ?? '');
        const remote = port(parts[parts.length - 1] ?? '');
        if ((parts.length === 2 || parts.length === 3) && local && remote && (parts.length === 2 || parts[1])) {
          return { local, remote, ...(parts.length === 3 ? { service: parts[1]! } : {}) };
        }
        return c.fail(path, `must be LOCAL:REMOTE or LOCAL:SERVICE:REMOTE with ports 1-65535, such as "8080:8080", not ${JSON.stringify(s)}`);
      },
    ),
  },
  'A port forwarded from this machine to the dev container (or to another service).',
);

const reverse: Decoder<Reverse> = map(
  str({ description: 'REMOTE:LOCAL: a port of the dev container forwarded to this machine.', examples: ['9000:9000'], pattern: '^[0-9]{1,5}:[0-9]{1,5}$' }),
  (s, path, c) => {
    const [r, l, ...rest] = s.split(':');
    const remote = port(r ?? '');
    const local = port(l ?? '');
    if (rest.length === 0 && remote && local) return { remote, local };
    return c.fail(path, `must be REMOTE:LOCAL with ports 1-65535, such as "9000:9000", not ${JSON.stringify(s)}`);
  },
);

const quantities = (description: string) =>
  record(str({ scalars: true }), {
    description,
    keyPattern: /^(cpu|memory|ephemeral-storage|[a-z0-9.-]+\/[a-z0-9.-]+)$/,
    keyRule: 'use cpu, memory, ephemeral-storage or an extended resource (vendor/name)',
  });

const resources = map(
  object(
    {
      requests: { decoder: quantities('Requested resources, e.g. {cpu: 250m, memory: 512Mi}.') },
      limits: { decoder: quantities('Resource limits, e.g. {cpu: 1, memory: 1Gi}.') },
    },
    { description: 'Resources of the dev container. Default: those of the original container.' },
  ),
  (r) => ({ requests: r.requests ?? {}, limits: r.limits ?? {} }),
);

const capabilities = map(
  object(
    { add: { decoder: list(str(), 'Linux capabilities to add.') }, drop: { decoder: list(str(), 'Linux capabilities to drop.') } },
    { description: 'Linux capabilities added to or dropped from the defaults.' },
  ),
  (c) => ({ add: c.add ?? [], drop: c.drop ?? [] }),
);

const securityContext: Decoder<SecurityContext> = object(
  {
    runAsUser: { decoder: int({ min: 0, description: 'User id of the dev container process.' }) },
    runAsGroup: { decoder: int({ min: 0, description: 'Group id of the dev container process.' }) },
    fsGroup: { decoder: int({ min: 0, description: 'Group owning the mounted volumes.' }) },
    runAsNonRoot: { decoder: bool('Refuse to start as root.') },
    allowPrivilegeEscalation: { decoder: bool('Allow setuid binaries to gain privileges.') },
    capabilities: { decoder: capabilities },
  },
  { description: 'Security settings of the dev container. Default: those of the original container.' },
);

const persistentVolume = map(
  object(
    {
      enabled: { decoder: bool('Keep synchronized files, the sync database and shell history on a volume across restarts. Default true.') },
      size: {
        decoder: str({
          scalars: true,
          description: `Size of the volume. Default "${DEFAULT_VOLUME_SIZE}".`,
          check: (s) => (/^\d+(\.\d+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$/.test(s) ? undefined : `must be a quantity such as "5Gi", not ${JSON.stringify(s)}`),
        }),
      },
      storageClass: { decoder: str({ description: "Storage class of the volume. Default: the cluster's default class." }) },
    },
    { description: 'The volume of the dev container.' },
  ),
  (p) => ({ enabled: p.enabled ?? true, size: p.size ?? DEFAULT_VOLUME_SIZE, ...(p.storageClass !== undefined ? { storageClass: p.storageClass } : {}) }),
);

const command: Decoder<string[]> = shapes(
  {
    string: map(str({ description: 'Split into words like a shell would (no shell is run).' }), (s, path, c) => {
      try {
        return splitShellwords(s);
      } catch (err) {
        return c.fail(path, (err as Error).message);
      }
    }),
    list: list(str()),
  },
  `Command of the dev container (the shell \`up\` opens). Default "${DEFAULT_DEV_COMMAND.join(' ')}".`,
);

const devService: Decoder<DevService> = map(
  object(
    {
      image: {
        decoder: str({
          description:
            "Image of the dev container (tools, compilers). Default: the original container's image; for a standalone one (autocreate), " +
            'the image the build section builds for it.',
        }),
      },
      command: { decoder: command },
      workdir: { decoder: str({ description: "Working directory in the dev container. Default: the first sync folder's remote path." }) },
      sync: { decoder: list(sync, 'Folders synchronized between this machine and the dev container: both ways, or sent only (":ro").') },
      syncOutsideProject: {
        decoder: bool(
          'Allow sync folders outside the project (the git repository or the manifest folder). Default false. The root, the home directory and ' +
            'folders holding it or the project are refused anyway.',
        ),
      },
      trustContainer: {
        decoder: bool(
          'Let the dev container write .git, set execute bits and make links pointing out of the synced folder on this machine. Default false: ' +
            'those stay in the container.',
        ),
      },
      forward: { decoder: list(forward, 'Ports forwarded from this machine to the dev container or another service.') },
      reverse: { decoder: list(reverse, 'Ports of the dev container forwarded back to this machine.') },
      environment: { decoder: keyValues('Environment variables of the dev container: a map, or a list of KEY=VALUE.') },
      resources: { decoder: resources },
      selector: {
        decoder: record(str({ scalars: true }), {
          description: 'Labels selecting the Deployment or StatefulSet to replace. Default: the one named like the service.',
        }),
      },
      container: { decoder: str({ description: 'Container to replace in a multi-container pod. Default: the first.' }) },
      persistentVolume: { decoder: persistentVolume },
      securityContext: { decoder: securityContext },
      autocreate: {
        decoder: bool(
          'When no Deployment matches, create a standalone dev Deployment (<name>-devtool) running the image (default: the build ' +
            "section's image for this service) instead of failing; `down` deletes it. Default false: a name that matches nothing is an error.",
        ),
      },
    },
    { description: 'A development container, used by `devtool up`.' },
  ),
  (s, path, c) => {
    const sync = scopedSync(s.sync ?? [], s.syncOutsideProject ?? false, path, c);
    if (!sync) return undefined;
    return {
      ...(s.image !== undefined ? { image: s.image } : {}),
      command: s.command ?? DEFAULT_DEV_COMMAND,
      ...(s.workdir !== undefined ? { workdir: s.workdir } : {}),
      sync,
      syncOutsideProject: s.syncOutsideProject ?? false,
      trustContainer: s.trustContainer ?? false,
      forward: s.forward ?? [],
      reverse: s.reverse ?? [],
      environment: s.environment ?? {},
      resources: s.resources ?? { requests: {}, limits: {} },
      selector: s.selector ?? {},
      ...(s.container !== undefined ? { container: s.container } : {}),
      persistentVolume: s.persistentVolume ?? { enabled: true, size: DEFAULT_VOLUME_SIZE },
      ...(s.securityContext !== undefined ? { securityContext: s.securityContext } : {}),
      autocreate: s.autocreate ?? false,
    };
  },
);

export const servicesDecoder = record(devService, {
  description: 'Development containers for `devtool up`: service name -> settings.',
  keyPattern: NAME_PATTERN,
  keyRule: NAME_RULE,
});
