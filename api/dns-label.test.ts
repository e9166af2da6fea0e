import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DNS_LABEL_MAX, DNS_LABEL_PATTERN, isDnsLabel } from './dns-label.ts';
import { NamespaceName, NewNamespaceName, PreviewName, UserName, USER_NAME_MAX, PERSONAL_SUFFIX } from './schemas.ts';

test('a DNS label: lowercase letters, digits and "-", alphanumeric at both ends, 63 at most', () => {
  const table: [string, boolean][] = [
    ['a', true],
    ['0', true],
    ['web-1', true],
    ['1-web', true],
    ['a'.repeat(63), true],
    ['a'.repeat(64), false],
    ['', false],
    ['-web', false],
    ['web-', false],
    ['Web', false],
    ['web_1', false],
    ['web.1', false],
  ];
  for (const [name, valid] of table) assert.equal(isDnsLabel(name), valid, JSON.stringify(name));
});

test("the contract's names are DNS labels, by the same pattern and length", () => {
  for (const schema of [NamespaceName, NewNamespaceName, PreviewName]) {
    assert.equal(schema.pattern, DNS_LABEL_PATTERN);
    assert.equal(schema.maxLength, DNS_LABEL_MAX);
  }
  assert.equal(UserName.pattern, DNS_LABEL_PATTERN);
  assert.equal(USER_NAME_MAX + PERSONAL_SUFFIX.length, DNS_LABEL_MAX, "a user's personal namespace is a DNS label too");
});
