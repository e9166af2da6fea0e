/**
 * Dev containers of a Compose application, for `up` in a folder with a Compose file and no
 * `services` section: a Compose service's host-path volumes (`./src:/app`) are not deployed
 * (compose/translate), they say what `up` synchronizes. So every long-running service with a
 * host-path folder is a dev container: its folders are synced, its published ports
 * (`HOST:CONTAINER`) forwarded from this machine, its `working_dir` is the shell's folder.
 * Pure: from the loaded project (and a way to tell folders from files) to `services` entries.
 */
import type { ComposeProject, ComposeService } from '../compose/model.ts';
import { toDnsLabel } from '../kube/naming.ts';
import { ownsStorage } from '../compose/translate/volumes.ts';
import { DEFAULT_DEV_COMMAND, DEFAULT_VOLUME_SIZE, type DevService } from '../manifest/model.ts';

export interface ComposeDevServices {
  /** By the service's Kubernetes name (the Deployment `up` replaces). */
  readonly services: Record<string, DevService>;
  /** Host-path volumes and services that cannot be developed, each said once. */
  readonly notes: string[];
}

export function composeDevServices(project: ComposeProject, isDirectory: (path: string) => boolean): ComposeDevServices {
  const services: Record<string, DevService> = {};
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
    const sync: DevService['sync'][number][] = [];
    for (const b of binds) {
      // Syncthing synchronizes folders: a mounted file (a config file, a socket) is not synced.
      if (!isDirectory(b.source)) {
        notes.push(`service ${service.name}: ${b.source}:${b.target} is not a folder, so it is not synchronized`);
        continue;
      }
      sync.push({ local: b.source, remote: b.target });
    }
    if (sync.length === 0) continue;
    services[toDnsLabel(service.name)] = {
      command: DEFAULT_DEV_COMMAND,
      ...(service.workingDir !== undefined ? { workdir: service.workingDir } : {}),
      sync,
      forward: service.ports.filter((p) => p.published !== undefined && p.protocol === 'TCP').map((p) => ({ local: p.published!, remote: p.container })),
      reverse: [],
      environment: {},
      resources: { requests: {}, limits: {} },
      selector: {},
      persistentVolume: { enabled: true, size: DEFAULT_VOLUME_SIZE },
      autocreate: false,
    };
  }
  return { services, notes };
}

/** Only a Deployment can be swapped for a dev container. */
function whyNotDevelopable(service: ComposeService): string | undefined {
  if (service.workload === 'one-off') return `it runs once (restart: ${service.restart}), as a Job`;
  if (ownsStorage(service)) return 'it owns volumes, so it runs as a StatefulSet';
  return undefined;
}
