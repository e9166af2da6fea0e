/**
 * Every golden fixture's objects (testdata/<rule>/expected.yaml) are accepted by the real API
 * server of the local cluster: a server-side apply with dryRun=All, in a throwaway namespace, so
 * a field the schema of Kubernetes refuses (a bad name, a wrong type, a missing selector...) is
 * caught here rather than at a user's deploy.
 */
import * as k8s from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { ensureCluster } from '../../cluster/test-cluster.ts';
import { testdata } from './testing.ts';

test('every golden fixture is accepted by the API server (server-side dry run)', { timeout: 600_000 }, async () => {
  const cluster = await ensureCluster();
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(cluster.kubeconfigPath);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const api = k8s.KubernetesObjectApi.makeApiClient(kc);
  const namespace = `golden-${Date.now().toString(36)}`;
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  const failures: string[] = [];
  let checked = 0;
  try {
    const dirs = readdirSync(testdata, { withFileTypes: true }).filter((d) => d.isDirectory() && d.name !== 'errors');
    for (const dir of dirs) {
      const docs = parseAllDocuments(readFileSync(join(testdata, dir.name, 'expected.yaml'), 'utf8'), { version: '1.1' });
      for (const doc of Array.isArray(docs) ? docs : []) {
        const o = doc.toJS() as k8s.KubernetesObject | null;
        if (!o) continue;
        const body = { ...o, metadata: { ...o.metadata, namespace } };
        try {
          await api.patch(body, undefined, 'All', 'devtool', true, k8s.PatchStrategy.ServerSideApply);
          checked++;
        } catch (err) {
          const e = err as { body?: unknown; message?: string };
          failures.push(`${dir.name}: ${o.kind}/${o.metadata?.name}: ${typeof e.body === 'string' ? e.body : (e.message ?? String(err))}`);
        }
      }
    }
  } finally {
    await core.deleteNamespace({ name: namespace }).catch(() => undefined);
  }
  assert.deepEqual(failures, []);
  assert.ok(checked > 50, `only ${checked} objects checked`);
});
