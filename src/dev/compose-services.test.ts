import assert from 'node:assert/strict';
import { test } from 'node:test';
import { join } from 'node:path';
import { loadCompose } from '../compose/load.ts';
import { projectScope } from '../manifest/project-scope.ts';
import { composeDevServices } from './compose-services.ts';

/** Folders that do not exist here: nothing on the way is a symlink, and no .git is found above them. */
function derive(text: string, folders: string[] = ['/p/src', '/p/web', '/p/shared'], cwd = '/p') {
  const project = loadCompose({ cwd, files: ['compose.yaml'], env: {}, fileAccess: { readFile: (p) => (p === join(cwd, 'compose.yaml') ? text : undefined) } });
  return composeDevServices(project, { isDirectory: (path) => folders.includes(path), scope: projectScope(cwd) });
}

test('a service mounting host folders is a dev container: folders synced, published ports forwarded, working_dir kept', () => {
  const { services, skipped, notes } = derive(`services:
  api_server:
    image: node
    working_dir: /app
    ports: ["8080:3000", "9229", "127.0.0.1:5353:53/udp"]
    volumes: ["./src:/app/src", "../p/shared:/shared:ro", "./config.json:/app/config.json"]
  db:
    image: postgres
    ports: ["5432:5432"]
`);
  assert.deepEqual(Object.keys(services), ['api-server'], 'by its Kubernetes name; db mounts no host folder');
  const api = services['api-server']!;
  assert.deepEqual(api.sync, [
    { local: '/p/src', remote: '/app/src', mode: 'two-way' },
    { local: '/p/shared', remote: '/shared', mode: 'send-only' },
  ]);
  assert.deepEqual(api.forward, [{ local: 8080, remote: 3000 }], 'bare and UDP ports are not forwarded');
  assert.equal(api.workdir, '/app');
  assert.deepEqual(api.command, ['sh']);
  assert.equal(api.persistentVolume.enabled, true);
  assert.deepEqual(
    skipped,
    { 'api-server': ['./config.json (-> /app/config.json) is not synchronized: it is not a folder, and only folders are'] },
    'up says it',
  );
  assert.deepEqual(notes, []);
});

test('services that are not Deployments are named, not developed', () => {
  const { services, notes } = derive(`services:
  migrate:
    image: app
    restart: "no"
    volumes: ["./src:/src"]
  store:
    image: app
    volumes: ["./web:/web", "data:/data"]
  web:
    image: nginx
    volumes: ["./web:/usr/share/nginx/html"]
volumes:
  data: {}
`);
  assert.deepEqual(Object.keys(services), ['web']);
  assert.equal(notes.length, 2);
  assert.match(notes[0]!, /^service migrate \(compose\.yaml:2\) has host-path volumes but it runs once \(restart: no\), as a Job/);
  assert.match(notes[1]!, /^service store \(compose\.yaml:6\) has host-path volumes but it owns volumes, so it runs as a StatefulSet/);
});

test('a service whose host paths are all files syncs nothing and is no dev container', () => {
  const { services, notes } = derive(`services:
  proxy:
    image: nginx
    volumes: ["./nginx.conf:/etc/nginx/nginx.conf"]
`);
  assert.deepEqual(services, {});
  assert.equal(notes.length, 1);
});

test('host folders outside the project are not synced, and each is said with how to opt in', () => {
  const { services, skipped, notes } = derive(`services:
  api:
    image: node
    volumes: ["~/.ssh:/root/.ssh:ro", "~/.aws:/root/.aws:ro", "../outside:/data", "/etc:/host-etc", "./src:/app/src"]
`);
  assert.deepEqual(services['api']!.sync, [{ local: '/p/src', remote: '/app/src', mode: 'two-way' }], 'only the folder of the project');
  const optIn = '; to synchronize it anyway, give api a services entry in devtool.yml with syncOutsideProject: true (docs/manifest.md#services)';
  assert.deepEqual(skipped['api'], [
    `~/.ssh (-> /root/.ssh) is not synchronized: it is outside the project (/p)${optIn}`,
    `~/.aws (-> /root/.aws) is not synchronized: it is outside the project (/p)${optIn}`,
    `/outside (-> /data) is not synchronized: it is outside the project (/p)${optIn}`,
    `/etc (-> /host-etc) is not synchronized: it is outside the project (/p)${optIn}`,
  ]);
  assert.deepEqual(notes, []);
});

test('the root, the home directory and a folder holding the project are never synced; a service left with nothing is said', () => {
  const { services, notes } = derive(
    `services:
  api:
    image: node
    volumes: ["~:/root", "/:/host", "..:/w"]
`,
    [],
    '/w/p',
  );
  assert.deepEqual(services, {});
  assert.deepEqual(notes, [
    `service api: ~ (-> /root) is not synchronized: it is the home directory, which is never synchronized (it holds SSH keys and cloud credentials)`,
    'service api: / (-> /host) is not synchronized: it is the root of the file system, which is never synchronized',
    'service api: /w (-> /w) is not synchronized: it holds the whole project (/w/p): synchronize the folders the container needs',
  ]);
});

test(':ro binds, short and long syntax, are sent only; read_only: false and :rw both ways', () => {
  const { services } = derive(`services:
  api:
    image: node
    volumes:
      - ./src:/app/src:ro
      - {type: bind, source: ./web, target: /web, read_only: true}
      - {type: bind, source: ./shared, target: /shared, read_only: false}
      - ./shared:/rw:rw
`);
  assert.deepEqual(
    services['api']!.sync.map((x) => `${x.remote} ${x.mode}`),
    ['/app/src send-only', '/web send-only', '/shared two-way', '/rw two-way'],
  );
});
