import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rootCommand } from '../commands/index.ts';
import { bashCompletion, zshCompletion } from './completion.ts';

const dir = mkdtempSync(join(tmpdir(), 'devtool-completion-test-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const bashScript = join(dir, 'devtool.bash');
const zshScript = join(dir, '_devtool');
writeFileSync(bashScript, bashCompletion(rootCommand));
writeFileSync(zshScript, zshCompletion(rootCommand));
/** The folder completion runs in, for file names. */
const work = join(dir, 'work');
mkdirSync(work);
writeFileSync(join(work, 'devtool.yml'), 'name: x\n');
writeFileSync(join(work, 'docker-compose.yml'), 'services: {}\n');

/** A clean environment: no user rc files, HOME in the temporary folder. */
const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, LANG: 'C' };

const hasZsh = spawnSync('zsh', ['-fc', 'true'], { env }).status === 0;

/** What bash completion offers for the words typed so far (the last one is being completed). */
function complete(...words: string[]): string[] {
  const script = `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMP_LINE="$*"; _devtool; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const r = spawnSync('bash', ['--norc', '--noprofile', '-c', script, 'bash', bashScript, 'devtool', ...words], {
    cwd: work,
    env,
    encoding: 'utf8',
    timeout: 10_000,
  });
  assert.equal(r.stderr, '', `bash stderr for "devtool ${words.join(' ')}"`);
  assert.equal(r.status, 0);
  return r.stdout.split('\n').filter(Boolean).sort();
}

test('the bash script is valid bash', () => {
  const r = spawnSync('bash', ['-n', bashScript], { env, encoding: 'utf8' });
  assert.equal(r.stderr, '');
  assert.equal(r.status, 0);
});

test('the zsh script is valid zsh', (t) => {
  if (!hasZsh) return t.skip('zsh is not installed');
  const r = spawnSync('zsh', ['-n', zshScript], { env, encoding: 'utf8' });
  assert.equal(r.stderr, '');
  assert.equal(r.status, 0);
});

test('the zsh script registers _devtool with compinit', (t) => {
  if (!hasZsh) return t.skip('zsh is not installed');
  const r = spawnSync('zsh', ['-fc', `autoload -Uz compinit && compinit -u -D && source "$1" && print -r -- "$_comps[devtool]"`, 'zsh', zshScript], {
    env,
    encoding: 'utf8',
    timeout: 10_000,
  });
  assert.equal(r.stderr, '');
  assert.equal(r.stdout.trim(), '_devtool');
});

test('bash completes commands and subcommands', () => {
  assert.ok(complete('context', 'u').includes('use'));
  assert.deepEqual(complete('context', 'u'), ['use']);
  assert.deepEqual(complete('pipeline', ''), ['--help', '--loglevel', '-h', 'deploy', 'destroy']);
  const top = complete('');
  for (const c of rootCommand.subcommands ?? []) if (!c.hidden) assert.ok(top.includes(c.name), c.name);
  assert.deepEqual(complete('con'), ['context']);
  // Global options before the command do not get in the way.
  assert.deepEqual(complete('--loglevel', 'debug', 'con'), ['context']);
  assert.deepEqual(complete('--loglevel', 'debug', 'context', 'l'), ['list']);
});

test('bash completes the options of the command being typed', () => {
  const up = complete('up', '--');
  for (const flag of ['--file', '--namespace', '--context', '--deploy', '--reset', '--env', '--loglevel', '--help']) assert.ok(up.includes(flag), flag);
  assert.equal(up.includes('--wait'), false, '--wait is not an option of up');
  assert.deepEqual(complete('deploy', '--ti'), ['--timeout']);
  assert.deepEqual(complete('context', 'use', '--t'), ['--token']);
});

test('bash completes option values: allowed values and files', () => {
  assert.deepEqual(complete('--loglevel', ''), ['debug', 'error', 'info', 'warn']);
  assert.deepEqual(complete('deploy', '--loglevel', 'd'), ['debug']);
  assert.deepEqual(complete('preview', 'deploy', '--scope', ''), ['global', 'personal']);
  // endpoints --output takes json or md.
  assert.deepEqual(complete('endpoints', '--output', ''), ['json', 'md']);
  assert.deepEqual(complete('endpoints', '-o', 'm'), ['md']);
  assert.deepEqual(complete('up', '-f', 'dev'), ['devtool.yml']);
  assert.deepEqual(complete('deploy', '--file', 'doc'), ['docker-compose.yml']);
});
