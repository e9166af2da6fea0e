import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { type RouteSpec, routes } from './routes.ts';
import { openApiDocument, openApiText } from './openapi.ts';

test('docs/api/openapi.json is what the route table generates', () => {
  const checkedIn = readFileSync(new URL('../docs/api/openapi.json', import.meta.url), 'utf8');
  assert.ok(checkedIn === openApiText(), 'docs/api/openapi.json is stale: run `npm run openapi` and commit it');
});

test('every route of the table is in the document, with its path parameters', () => {
  const paths = openApiDocument()['paths'] as Record<string, Record<string, { operationId: string; parameters?: { name: string }[] }>>;
  for (const [id, r] of Object.entries(routes) as [string, RouteSpec][]) {
    const path = r.url.replace(/:([A-Za-z]+)/g, '{$1}');
    const op = paths[path]?.[r.method.toLowerCase()];
    assert.equal(op?.operationId, id, `${r.method} ${path}`);
    const inPath = [...r.url.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1]);
    assert.deepEqual(op?.parameters?.map((p) => p.name) ?? [], inPath, `${id}: the params schema names the path's parameters`);
  }
});
