// npm run docs:cli: writes docs/cli.md from the command specs (src/commands/*/spec.ts).
// src/commands/docs-cli.test.ts fails when the checked-in file differs from what this writes.
import { writeFileSync } from 'node:fs';
import { commandsMarkdown } from '../src/cli/markdown.ts';
import { rootCommand } from '../src/commands/index.ts';

writeFileSync(new URL('../docs/cli.md', import.meta.url), commandsMarkdown(rootCommand));
console.log('wrote docs/cli.md');
