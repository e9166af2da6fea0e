import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { apiData } from '../scripts/api-as-data.mjs';
import { ANALYTICS_ACTION_PATTERN, API_PREFIX, BUILD_TUNNEL_PROTOCOL, CAPABILITIES, CLI_CLIENT_ID, DEVICE_GRANT_TYPE, routes } from './routes.ts';

// What the CLI's bundles get instead of this module (scripts/api-as-data.mjs): the client calls a
// route by its name and finds its method and path there.
test("every route is in the CLI's data at its method and path, with the constants and no schema", async () => {
  const code = await apiData(fileURLToPath(new URL('./routes.ts', import.meta.url)));
  const module = { exports: {} as { routes: Record<string, unknown>; [name: string]: unknown } };
  new Function('module', code)(module);
  assert.deepEqual(Object.keys(module.exports.routes).sort(), Object.keys(routes).sort());
  for (const [name, route] of Object.entries(routes)) {
    const stream = 'textStream' in route ? { textStream: true } : {};
    assert.deepEqual(module.exports.routes[name], { method: route.method, url: route.url, ...stream }, name);
  }
  const constants = { API_PREFIX, CLI_CLIENT_ID, ANALYTICS_ACTION_PATTERN, BUILD_TUNNEL_PROTOCOL, DEVICE_GRANT_TYPE, CAPABILITIES };
  for (const [name, value] of Object.entries(constants)) assert.deepEqual(module.exports[name], value, name);
  assert.ok(!code.includes('"properties"'), 'a schema reached the data');
});
