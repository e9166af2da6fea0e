// npm run docs:cli: writes docs/cli.md and docs/cli-service.md from the command specs (src/commands/*/spec.ts).
// src/commands/docs-cli.test.ts fails when a checked-in file differs from what this writes.
import { writeFileSync } from 'node:fs';
import { commandsMarkdown } from '../src/cli/markdown.ts';
import { rootCommand } from '../src/commands/index.ts';

for (const [file, text] of Object.entries(commandsMarkdown(rootCommand))) {
  writeFileSync(new URL(`../docs/${file}`, import.meta.url), text);
  console.log(`wrote docs/${file}`);
}
