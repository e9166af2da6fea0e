import assert from 'node:assert/strict';
import { test } from 'node:test';
import { kubeErrorLine } from './kubernetes.ts';

test("a Kubernetes refusal is one short line: the Status message's first line", () => {
  const body = JSON.stringify({
    kind: 'Status',
    code: 403,
    message: 'rolebindings "x" is forbidden: attempting to grant RBAC permissions not currently held:\n{...}\n{...}',
  });
  assert.equal(
    kubeErrorLine({ code: 403, body }),
    'Kubernetes API answered 403: rolebindings "x" is forbidden: attempting to grant RBAC permissions not currently held',
  );
  assert.equal(kubeErrorLine({ code: 500, body: '<html>' }), 'Kubernetes API answered 500');
  assert.equal(kubeErrorLine(new Error('socket hang up')), undefined);
});
