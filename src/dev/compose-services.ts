/**
 * Dev containers of a Compose application, for `up` in a folder with a Compose file and no
 * `services` section: a Compose service's host-path volumes (`./src:/app`) are not deployed
 * (compose/translate), they say what `up` synchronizes. So every long-running service with a
 * host-path folder is a dev container: its folders are synced, its published ports
 * (`HOST:CONTAINER`) forwarded from this machine, its `working_dir` is the shell's folder.
 * Only folders of the project are synced (project-scope.ts): a bind of `~/.ssh` or `../other` is
 * said and left out (a devtool.yml `services` entry can opt in); a `:ro` bind is sent only.
 * From the loaded project (and a way to tell folders from files) to `services` entries.
 */
import type { ComposeProject, ComposeService } from '../compose/model.ts';
import { toDnsLabel } from '../kube/naming.ts';
import { ownsStorage } from '../compose/translate/volumes.ts';
import { DEFAULT_DEV_COMMAND, DEFAULT_VOLUME_SIZE, type DevService } from '../manifest/model.ts';
import { showPath, SYNC_OUTSIDE_FIELD, syncRefusal, type ProjectScope } from '../manifest/project-scope.ts';

export interface ComposeDevServices {
  /** By the service's Kubernetes name (the Deployment `up` replaces). */
  readonly services: Record<string, DevService>;
  /** By the same name: the service's host paths that are not synced, each with why (`up` says them). */
  readonly skipped: Record<string, string[]>;
  /** Services that cannot be developed, each said once. */
  readonly notes: string[];
}

export interface HostFolders {
  isDirectory(path: string): boolean;
  /** Where the project is: binds outside it are not synced. */
  readonly scope: ProjectScope;
}

export function composeDevServices(project: ComposeProject, host: HostFolders): ComposeDevServices {
  const services: Record<string, DevService> = {};
  const skipped: Record<string, string[]> = {};
  const notes: string[] = [];
  for (const service of project.services) {
    const binds = service.volumes.filter((v) => v.kind === 'bind');
    if (binds.length === 0) continue;
    const where = `${service.pos.file}:${service.pos.line}`;
    const cannot = whyNotDevelopable(service);
    if (cannot) {
      notes.push(`service ${service.name} (${where}) has host-path volumes but ${cannot}: 'devtool up' cannot develop it`);
      continue;
    }
    const devName = toDnsLabel(service.name);
    const sync: DevService['sync'][number][] = [];
    const notSynced: string[] = [];
    for (const b of binds) {
      const said = `${showPath(b.source, host.scope.folder)} (-> ${b.target}) is not synchronized`;
      const refusal = syncRefusal(host.scope, b.source, false);
      if (refusal) {
        const optIn =
          refusal.kind === 'outside'
            ? `; to synchronize it anyway, give ${devName} a services entry in devtool.yml with ${SYNC_OUTSIDE_FIELD}: true (docs/manifest.md#services)`
            : '';
        const it = refusal.resolved ? `it resolves to ${refusal.resolved}, which` : 'it';
        notSynced.push(`${said}: ${it} ${refusal.reason}${optIn}`);
      } else if (!host.isDirectory(b.source)) {
        // Syncthing synchronizes folders: a mounted file (a config file, a socket) is not synced.
        notSynced.push(`${said}: it is not a folder, and only folders are`);
      } else {
        sync.push({ local: b.source, remote: b.target, mode: b.readOnly ? 'send-only' : 'two-way' });
      }
    }
    if (sync.length === 0) {
      notes.push(...notSynced.map((n) => `service ${service.name}: ${n}`));
      continue;
    }
    skipped[devName] = notSynced;
    services[devName] = {
      command: DEFAULT_DEV_COMMAND,
      ...(service.workingDir !== undefined ? { workdir: service.workingDir } : {}),
      sync,
      syncOutsideProject: false,
      trustContainer: false,
      forward: service.ports.filter((p) => p.published !== undefined && p.protocol === 'TCP').map((p) => ({ local: p.published!, remote: p.container })),
      reverse: [],
      environment: {},
      resources: { requests: {}, limits: {} },
      selector: {},
      persistentVolume: { enabled: true, size: DEFAULT_VOLUME_SIZE },
      autocreate: false,
    };
  }
  return { services, skipped, notes };
}

/** Only a Deployment can be swapped for a dev container. */
function whyNotDevelopable(service: ComposeService): string | undefined {
  if (service.workload === 'one-off') return `it runs once (restart: ${service.restart}), as a Job`;
  if (ownsStorage(service)) return 'it owns volumes, so it runs as a StatefulSet';
  return undefined;
}
