import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ResolvedContext } from '../context/store.ts';
import { kubeConfigFor } from './config.ts';

const context: ResolvedContext = {
  name: 'https://devtool.example',
  isDevtool: true,
  namespace: 'shop',
  source: 'stored',
  host: 'https://devtool.example',
  token: 'dvt_x',
};

test('a service context: the API server and CA from the service, and a token asked for on every request (so a refreshed one is used)', async () => {
  let token = 'first';
  let asked = 0;
  const credentials = {
    current: async () => {
      asked++;
      return { server: 'https://k8s.example:6443', certificateAuthority: 'PEM', token };
    },
  };
  const kc = await kubeConfigFor(context, {}, credentials);
  assert.equal(kc.getCurrentCluster()?.server, 'https://k8s.example:6443');
  assert.equal(Buffer.from(kc.getCurrentCluster()?.caData ?? '', 'base64').toString(), 'PEM');
  assert.equal(kc.getContextObject(kc.getCurrentContext())?.namespace, 'shop');
  const headers = async () => {
    const opts: { headers?: Record<string, string> } = {};
    await kc.applyToHTTPSOptions(opts);
    return opts.headers?.Authorization;
  };
  assert.equal(await headers(), 'Bearer first');
  token = 'second';
  assert.equal(await headers(), 'Bearer second', 'the next request carries the refreshed token');
  assert.ok(asked >= 3);
  await assert.rejects(kubeConfigFor(context, {}), /log in with 'devtool context use https:\/\/devtool.example --token <API_TOKEN>'/);
});
