import assert from 'node:assert/strict';
import { test } from 'node:test';
import { routes } from './contract.ts';
import { endpoints } from './endpoints.ts';

// The client calls endpoints.ts; the server registers, validates and documents contract.ts's routes.
test("every route of the contract is at its endpoint's method and path, and every endpoint is a route", () => {
  assert.deepEqual(Object.keys(routes).sort(), Object.keys(endpoints).sort());
  for (const [name, route] of Object.entries(routes)) {
    const endpoint = endpoints[name as keyof typeof endpoints];
    assert.deepEqual({ method: route.method, url: route.url }, endpoint, name);
  }
});
