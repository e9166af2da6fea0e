/**
 * cluster/dns.sh on a scratch copy of resolv.conf and a second loopback address (the machine's own
 * set-up stays as it is): `up` puts dnsmasq first and keeps the original lines after it, answers
 * the endpoint domain with the node's address and forwards other names, a second `up` changes
 * nothing, and `down` puts the original back byte for byte.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { Resolver } from 'node:dns/promises';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const script = join(import.meta.dirname, 'dns.sh');
const dir = mkdtempSync(join(tmpdir(), 'devtool-dns-'));
const resolvConf = join(dir, 'resolv.conf');
const state = join(dir, 'state');
const LISTEN = '127.0.0.77';
const upstream = readFileSync('/etc/resolv.conf', 'utf8')
  .split('\n')
  .filter((l) => /^nameserver\s/.test(l) && !/\s(127\.|::1$)/.test(l));
const original = `# a machine's resolv.conf\n${upstream.join('\n')}\noptions timeout:2\n`;
const env = { ...process.env, DEVTOOL_RESOLV_CONF: resolvConf, DEVTOOL_DNS_STATE: state, DEVTOOL_DNS_LISTEN: LISTEN };
const dns = (cmd: string) => spawnSync('bash', [script, cmd], { encoding: 'utf8', env, timeout: 300_000 });
const resolver = new Resolver({ timeout: 2000, tries: 2 });
resolver.setServers([LISTEN]);
const nodeIp = () => spawnSync('bash', ['-c', `source ${join(import.meta.dirname, 'lib/common.sh')} && node_ip`], { encoding: 'utf8' }).stdout.trim();

before(() => {
  assert.ok(upstream.length > 0, 'the machine has a non-loopback nameserver to forward to');
  writeFileSync(resolvConf, original);
});
after(() => {
  dns('down');
  rmSync(dir, { recursive: true, force: true });
});

test('up: dnsmasq first, the original lines after it; the domain is the node, other names are forwarded', async () => {
  const r = dns('up');
  assert.equal(r.status, 0, r.stderr);
  const lines = readFileSync(resolvConf, 'utf8').split('\n');
  assert.match(lines[0]!, /^# devtool cluster\/dns\.sh:/);
  assert.equal(lines[1], `nameserver ${LISTEN}`);
  assert.equal(lines.slice(2).join('\n'), original);
  assert.deepEqual(await resolver.resolve4('some-app-ns.e2e.devtool.test'), [nodeIp()]);
  assert.ok((await resolver.resolve4('deb.debian.org')).length > 0, 'forwards other names upstream');
});

test('up again changes nothing', () => {
  const pid = readFileSync(join(state, 'dnsmasq.pid'), 'utf8');
  const conf = readFileSync(resolvConf, 'utf8');
  const r = dns('up');
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, '', 'nothing to report');
  assert.equal(readFileSync(join(state, 'dnsmasq.pid'), 'utf8'), pid);
  assert.equal(readFileSync(resolvConf, 'utf8'), conf);
});

test('down restores the original and stops dnsmasq', async () => {
  const pid = Number(readFileSync(join(state, 'dnsmasq.pid'), 'utf8'));
  const r = dns('down');
  assert.equal(r.status, 0, r.stderr);
  assert.equal(readFileSync(resolvConf, 'utf8'), original);
  assert.throws(() => process.kill(pid, 0), 'dnsmasq is gone');
  await assert.rejects(resolver.resolve4('some-app-ns.e2e.devtool.test'));
});
