import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildVariablePrefix, buildVariables } from './variables.ts';

test('variable names: NAME upper-cased, other characters than letters and digits as _', () => {
  assert.equal(buildVariablePrefix('api'), 'DEVTOOL_BUILD_API_');
  assert.equal(buildVariablePrefix('web-front.v2'), 'DEVTOOL_BUILD_WEB_FRONT_V2_');
});

test('an image gives IMAGE, REGISTRY, REPOSITORY, TAG and SHA', () => {
  const o = {
    name: 'api',
    image: 'localhost:5000/shop-api:devtool-abc',
    registry: 'localhost:5000',
    repository: 'shop-api',
    tag: 'devtool-abc',
    digest: 'sha256:0123',
    skipped: true,
  };
  assert.deepEqual(buildVariables(o), {
    DEVTOOL_BUILD_API_IMAGE: 'localhost:5000/shop-api:devtool-abc',
    DEVTOOL_BUILD_API_REGISTRY: 'localhost:5000',
    DEVTOOL_BUILD_API_REPOSITORY: 'shop-api',
    DEVTOOL_BUILD_API_TAG: 'devtool-abc',
    DEVTOOL_BUILD_API_SHA: 'sha256:0123',
  });
  assert.ok(!('DEVTOOL_BUILD_API_SHA' in buildVariables(o, false)), 'build arguments of dependents leave the digest out');
  const { digest: _, ...unknownDigest } = o;
  assert.ok(!('DEVTOOL_BUILD_API_SHA' in buildVariables(unknownDigest)));
});
