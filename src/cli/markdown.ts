/**
 * docs/cli.md and docs/cli-service.md, written from the command specs as help is, so the pages cannot
 * disagree with what the parser accepts: every command and subcommand (hidden ones marked), its synopsis, arguments,
 * options with type, default and meaning, examples, then the global options and the exit codes.
 * Pure: `npm run docs:cli` writes the text, and a unit test fails when a checked-in page differs.
 */
import { ExitCode } from '../base/errors.ts';
import { type ArgSpec, type CommandSpec, globalOptions, type OptionSpec, synopsis } from './spec.ts';

/** What each exit code means; a code added to ExitCode without a meaning here does not compile. */
const EXIT_CODE_MEANINGS: Record<keyof typeof ExitCode, string> = {
  ok: 'The command did what it was asked.',
  failure: 'The command ran and failed: a cluster or service error, a failed build or deploy, an invalid manifest or Compose file.',
  usage: 'The command line is wrong: an unknown command or flag, a bad value, a missing argument; or a prompt is needed and there is no terminal.',
  unavailable: 'What the command needs is not there: the devtool service on a plain cluster context, a logged-in user on a service context.',
  interrupted: 'Interrupted: Ctrl-C, SIGTERM or a cancelled prompt. A command that was changing things ends with one line saying what is left.',
};

/**
 * The commands that exist only with the devtool service (its namespaces, users, pipelines,
 * previews) have a page of their own, docs/cli-service.md: one page for every command would hold
 * two subjects and outgrow a reading.
 */
const SERVICE_PAGE_COMMANDS: ReadonlySet<string> = new Set(['namespace', 'pipeline', 'preview', 'user', 'kubetoken']);

/** The command pages, by file name under docs/: `cli.md` and `cli-service.md`. */
export function commandsMarkdown(root: CommandSpec, servicePage = SERVICE_PAGE_COMMANDS): Record<'cli.md' | 'cli-service.md', string> {
  const commands = allCommands(root);
  const pageOf = (path: readonly string[]) => (servicePage.has(path[0]!) ? 'cli-service.md' : 'cli.md');
  const link = (path: readonly string[]) => `${pageOf(path) === 'cli.md' ? '' : pageOf(path)}#${anchor(commandName(root, path))}`;
  const main: string[] = [
    `# The \`${root.name}\` command line`,
    '',
    `${root.summary}. This page and [cli-service.md](cli-service.md) (the commands of the devtool service) are generated from`,
    'the command specs (`src/commands/*/spec.ts`) by `npm run docs:cli`; a unit test fails when they are stale.',
    '`devtool <command> --help` prints the same, one command at a time.',
    '',
    '```text',
    `${root.name} [options] <command> [subcommand] [parameters]`,
    '```',
    '',
    '## Commands',
    '',
    ...commands.map(({ path, spec }) => `- [\`${commandName(root, path)}\`](${link(path)}): ${inline(spec.summary)}${hiddenNote(spec)}`),
    '',
    '## Global options',
    '',
    'Every command takes them, before or after its name.',
    '',
    ...optionTable(globalOptions),
    '',
    '## Exit codes',
    '',
    '| Code | Meaning |',
    '|---|---|',
    ...(Object.entries(ExitCode) as [keyof typeof ExitCode, number][]).map(([name, code]) => `| ${code} | ${inline(EXIT_CODE_MEANINGS[name])} |`),
    '',
    'Every error is one line on stderr; the details (a stack trace) go to `devtool.log` in the devtool home.',
  ];
  const service: string[] = [
    `# The \`${root.name}\` commands of the devtool service`,
    '',
    'Namespaces, users, pipelines and previews. What acts on the devtool service needs a service context: the current one',
    '(`devtool context use <URL>`) or the one a `--context <URL>` names; `namespace` and `namespace use` work on a plain cluster too.',
    `The other commands, the global options and the exit codes are in [cli.md](cli.md); this page is generated with it.`,
  ];
  for (const { path, spec } of commands) (pageOf(path) === 'cli.md' ? main : service).push('', ...commandSection(root, path, spec));
  return { 'cli.md': `${main.join('\n')}\n`, 'cli-service.md': `${service.join('\n')}\n` };
}

function commandSection(root: CommandSpec, path: readonly string[], spec: CommandSpec): string[] {
  const lines = [`## \`${commandName(root, path)}\``, ''];
  if (spec.hidden) lines.push('*Internal: not listed in help.*', '');
  lines.push(...paragraphs(spec.description ?? spec.summary), '', '```text', synopsis(path, spec), '```');
  const subs = spec.subcommands ?? [];
  if (subs.length) {
    lines.push('', '| Subcommand | What it does |', '|---|---|');
    for (const c of subs) {
      const name = commandName(root, [...path, c.name]);
      lines.push(`| [\`${c.name}\`](#${anchor(name)}) | ${inline(c.summary)}${hiddenNote(c)} |`);
    }
    if (!spec.load) lines.push('', 'Without a subcommand, prints its help.');
  }
  const args = spec.args ?? [];
  if (args.length || spec.passthrough) {
    lines.push('', '| Argument | Meaning |', '|---|---|');
    for (const a of args) lines.push(`| \`${argName(a)}\` | ${argMeaning(a)} |`);
    if (spec.passthrough) {
      const p = spec.passthrough;
      lines.push(`| \`-- ${p.name}\` | ${p.required ? 'Required' : 'Optional'}. The words after \`--\`, passed on as they are |`);
    }
  }
  const options = (spec.options ?? []).filter((o) => !o.hidden);
  if (options.length) lines.push('', ...optionTable(options));
  if (spec.examples?.length) lines.push('', 'Examples:', '', '```sh', ...spec.examples, '```');
  return lines;
}

function optionTable(options: readonly OptionSpec[]): string[] {
  return [
    '| Option | Type | Default | Meaning |',
    '|---|---|---|---|',
    ...options.map((o) => `| ${o.short ? `\`-${o.short}\`, ` : ''}\`--${o.name}\` | ${typeText(o)} | ${defaultText(o)} | ${inline(o.description)} |`),
  ];
}

function typeText(o: OptionSpec): string {
  switch (o.type) {
    case 'bool':
      return 'boolean';
    case 'list':
      return o.of === 'assignments' ? '`KEY=VALUE`, repeatable (KEY a variable name; a later KEY wins)' : 'string, repeatable';
    case 'duration':
      return 'duration (`90s`, `5m0s`)';
    case 'string':
      return o.allowed ? `one of ${o.allowed.map((v) => `\`${v}\``).join(', ')}` : 'string';
  }
}

/** As help shows it: a literal default in code, a described one as words; booleans default to false. */
function defaultText(o: OptionSpec): string {
  if (o.defaultText) return inline(o.defaultText);
  if (o.default !== undefined) return `\`${o.default}\``;
  if (o.type === 'bool') return '`false`';
  return '';
}

function argName(a: ArgSpec): string {
  return a.variadic ? `${a.name}...` : a.name;
}

function argMeaning(a: ArgSpec): string {
  const presence = a.required ? 'Required' : 'Optional';
  const many = a.variadic ? ', any number' : '';
  return a.description ? `${presence}${many}. ${inline(a.description)}` : `${presence}${many}`;
}

function hiddenNote(spec: CommandSpec): string {
  return spec.hidden ? ' (internal: not listed in help)' : '';
}

function commandName(root: CommandSpec, path: readonly string[]): string {
  return [root.name, ...path].join(' ');
}

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens. */
export function anchor(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^a-z0-9 _-]/g, '')
    .replace(/ /g, '-');
}

/**
 * A spec's description as Markdown: each line a paragraph, and indented lines (shell snippets in
 * help) one code block.
 */
function paragraphs(text: string): string[] {
  const out: string[] = [];
  let code: string[] = [];
  const flush = () => {
    if (code.length) out.push('```sh', ...code, '```', '');
    code = [];
  };
  for (const line of text.split('\n')) {
    if (/^\s/.test(line)) {
      code.push(line.trim());
      continue;
    }
    flush();
    out.push(inline(line), '');
  }
  flush();
  out.pop();
  return out;
}

/**
 * Help's plain text as Markdown on one line: outside code spans, characters Markdown would read
 * as markup (`<ID>` as an HTML tag, `*` as emphasis) are escaped; `|` everywhere, for tables.
 */
function inline(text: string): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part) => (part.startsWith('`') ? part : part.replace(/[\\*<>]/g, (c) => (c === '<' ? '&lt;' : c === '>' ? '&gt;' : `\\${c}`))))
    .join('')
    .replace(/\|/g, '\\|');
}

/** Every command under `root`, hidden ones included, depth first, with its path. */
function allCommands(root: CommandSpec): { path: string[]; spec: CommandSpec }[] {
  const out: { path: string[]; spec: CommandSpec }[] = [];
  const walk = (path: string[], spec: CommandSpec) => {
    for (const c of spec.subcommands ?? []) {
      out.push({ path: [...path, c.name], spec: c });
      walk([...path, c.name], c);
    }
  };
  walk([], root);
  return out;
}
