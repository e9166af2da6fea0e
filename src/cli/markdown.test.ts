import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertGolden } from '../../test/golden.ts';
import { anchor, commandsMarkdown } from './markdown.ts';
import type { CommandSpec } from './spec.ts';

const handler = async () => async () => {};

/** One of each thing a spec can say, in as few commands as that takes. */
const tinyRoot: CommandSpec = {
  name: 'devtool',
  summary: 'A tiny tree',
  subcommands: [
    {
      name: 'run',
      summary: 'Run something',
      description: 'Runs <WHAT> in the container.\nA second paragraph, with a | and a *.\n  devtool run web -- make test',
      args: [{ name: 'devName', description: 'The `services` entry' }],
      passthrough: { name: 'COMMAND', required: true },
      options: [
        { name: 'file', short: 'f', type: 'string', default: 'devtool.yml', description: 'Manifest path' },
        { name: 'namespace', short: 'n', type: 'string', defaultText: 'current namespace', description: 'Namespace' },
        { name: 'output', short: 'o', type: 'string', allowed: ['json', 'md'], description: 'Output format' },
        { name: 'timeout', type: 'duration', default: '5m0s', description: 'Wait at most this long' },
        { name: 'env', short: 'e', type: 'list', of: 'assignments', description: 'Environment variable; repeatable' },
        { name: 'dry-run', type: 'bool', description: 'Print, do not apply' },
        { name: 'old-name', type: 'bool', hidden: true, description: 'An alias' },
      ],
      examples: ['devtool run -- ls', 'devtool run api -- sh'],
      load: handler,
    },
    {
      name: 'group',
      summary: 'A group of two',
      subcommands: [
        {
          name: 'one',
          summary: 'The first',
          args: [
            { name: 'NAME', required: true },
            { name: 'MORE', variadic: true },
          ],
          load: handler,
        },
        { name: 'plumbing', summary: 'Called by other programs', hidden: true, load: handler },
      ],
    },
  ],
};

test('the command reference pages of a tiny tree, `group` on the service page', () => {
  const pages = commandsMarkdown(tinyRoot, new Set(['group']));
  assertGolden(new URL('testdata/cli.md', import.meta.url).pathname, pages['cli.md']);
  assertGolden(new URL('testdata/cli-service.md', import.meta.url).pathname, pages['cli-service.md']);
});

test('links point at the anchors GitHub gives the headings', () => {
  assert.equal(anchor('`devtool context use`'), 'devtool-context-use');
  assert.equal(anchor('devtool group plumbing'), 'devtool-group-plumbing');
});
