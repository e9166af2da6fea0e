import { test } from 'node:test';
import assert from 'node:assert/strict';
import { claimStrength, normalizeHost, parseAllowedHosts, refusal } from './hosts.ts';

const rules = { endpointDomain: 'devtool.test', allowedHosts: { devtool: ['devtool.devtool.test'], git: ['git.example.com'] } };

test("a namespace claims its own endpoints' names: one label under the domain, ending in -<namespace>", () => {
  assert.ok(claimStrength('web-alice.devtool.test', 'alice', rules) > 0);
  assert.ok(claimStrength('api-v2-alice.devtool.test', 'alice', rules) > 0);
  assert.equal(claimStrength('web-alice.devtool.test', 'bob', rules), 0, "another namespace's endpoint");
  assert.equal(claimStrength('webalice.devtool.test', 'alice', rules), 0, 'no - before the namespace');
  assert.equal(claimStrength('-alice.devtool.test', 'alice', rules), 0, 'no name before -<namespace>');
  assert.equal(claimStrength('alice.devtool.test', 'alice', rules), 0, 'the bare namespace is no endpoint');
  assert.equal(claimStrength('x.web-alice.devtool.test', 'alice', rules), 0, 'two labels under the domain');
  assert.equal(claimStrength('web-alice.devtool.test.evil.example', 'alice', rules), 0);
  assert.equal(claimStrength('web-alice.otherdevtool.test', 'alice', rules), 0, 'a domain that only ends like ours');
  assert.equal(claimStrength('github.com', 'alice', rules), 0);
  assert.equal(claimStrength('devtool.test', 'alice', rules), 0);
});

test('the longer namespace owns an ambiguous name, and an allowance outranks every form', () => {
  assert.ok(claimStrength('web-b-a.devtool.test', 'b-a', rules) > claimStrength('web-b-a.devtool.test', 'a', rules));
  assert.ok(claimStrength('web-b-a.devtool.test', 'a', rules) > 0);
  assert.ok(claimStrength('devtool.devtool.test', 'devtool', rules) > claimStrength('web-x-devtool.devtool.test', 'x-devtool', rules));
  assert.equal(claimStrength('devtool.devtool.test', 'alice', rules), 0, 'allowed to its namespace only');
});

test('an allowance outside the endpoint domain is no claim: the CA would not sign it', () => {
  assert.equal(claimStrength('git.example.com', 'git', rules), 0);
  assert.match(refusal('git.example.com', 'git', rules), /outside the endpoint domain devtool\.test/);
  assert.match(refusal('web-alice.devtool.test', 'bob', rules), /not namespace bob's: its endpoints are <name>-bob\.devtool\.test/);
});

test('hosts compare in lower case, without a trailing dot', () => {
  assert.equal(normalizeHost('Web-Alice.DevTool.Test.'), 'web-alice.devtool.test');
});

test("the operator's allowances: hosts by namespace, in JSON", () => {
  assert.deepEqual(parseAllowedHosts('{"devtool":["Devtool.Devtool.Test"],"git":[]}'), { devtool: ['devtool.devtool.test'], git: [] });
  assert.deepEqual(parseAllowedHosts(''), {});
  assert.throws(() => parseAllowedHosts('{"devtool":"devtool.devtool.test"}'), /devtool: expected a list of hosts/);
  assert.throws(() => parseAllowedHosts('["x"]'), /expected \{"<namespace>"/);
  assert.throws(() => parseAllowedHosts('{'), /not JSON/);
});
