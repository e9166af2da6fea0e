import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { commandsMarkdown } from '../cli/markdown.ts';
import { rootCommand } from './index.ts';

test('docs/cli.md is what the command specs generate', () => {
  const checkedIn = readFileSync(new URL('../../docs/cli.md', import.meta.url), 'utf8');
  assert.ok(checkedIn === commandsMarkdown(rootCommand), 'docs/cli.md is stale: run `npm run docs:cli` and commit it');
});
