import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadCompose } from '../compose/load.ts';
import { composeDevServices } from './compose-services.ts';

function derive(text: string, folders: string[] = ['/p/src', '/p/web', '/p/shared']) {
  const project = loadCompose({ cwd: '/p', files: ['compose.yaml'], env: {}, fileAccess: { readFile: (p) => (p === '/p/compose.yaml' ? text : undefined) } });
  return composeDevServices(project, (path) => folders.includes(path));
}

test('a service mounting host folders is a dev container: folders synced, published ports forwarded, working_dir kept', () => {
  const { services, notes } = derive(`services:
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
    { local: '/p/src', remote: '/app/src' },
    { local: '/p/shared', remote: '/shared' },
  ]);
  assert.deepEqual(api.forward, [{ local: 8080, remote: 3000 }], 'bare and UDP ports are not forwarded');
  assert.equal(api.workdir, '/app');
  assert.deepEqual(api.command, ['sh']);
  assert.equal(api.persistentVolume.enabled, true);
  assert.deepEqual(notes, ['service api_server: /p/config.json:/app/config.json is not a folder, so it is not synchronized']);
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
