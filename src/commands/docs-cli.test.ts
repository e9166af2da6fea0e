import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { commandsMarkdown } from '../cli/markdown.ts';
import { rootCommand } from './index.ts';

test('docs/cli.md and docs/cli-service.md are what the command specs generate', () => {
  for (const [file, text] of Object.entries(commandsMarkdown(rootCommand))) {
    const checkedIn = readFileSync(new URL(`../../docs/${file}`, import.meta.url), 'utf8');
    assert.ok(checkedIn === text, `docs/${file} is stale: run \`npm run docs:cli\` and commit it`);
  }
});
