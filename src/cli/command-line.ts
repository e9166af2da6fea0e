/**
 * The command line as devtool.log records it. Values a user may pass as secrets are replaced by
 * *** by their place on the line, whatever they look like and however short:
 *
 * - an option marked `sensitive` (spec.ts): `--token ***`, `--var DB_PASSWORD=***`, `-e KEY=***`;
 * - after `--` (exec's command, run in the container): the value of every KEY=VALUE word and of
 *   every assignment inside a word (`env TOKEN=***`, `sh -c "A=*** run"`), and the word after a
 *   secret-named flag (`mysql --password ***`).
 *
 * Then the patterns of redact.ts catch the rest (a password in a URL, a bearer token, a GitHub
 * token). The values that look secret are returned too, for the logger to hide wherever a later
 * line repeats them (an error message, a stack). Values of other names (`--var MODE=local`) are
 * masked on the command line only: hiding "local" in every line would make the log unreadable.
 */
import { isSecretName, NOT_LOGGED, redactPatterns } from '../log/redact.ts';
import { VARIABLE_NAME } from './assignments.ts';
import { findOption } from './parse.ts';
import type { OptionSpec } from './spec.ts';

export interface LoggedCommandLine {
  text: string;
  /** Values to hide in every later line of the log. */
  secrets: string[];
}

/** A variable name, as a list of assignments takes it (assignments.ts), without its anchors. */
const NAME = VARIABLE_NAME.source.slice(1, -1);
const ASSIGNMENT = new RegExp(`^(${NAME})=([\\s\\S]*)$`);
// An assignment inside a shell word: at its start or after a space; a quoted value is whole.
const INNER_ASSIGNMENT = new RegExp(`(^|\\s)(${NAME})=("[^"]*"|'[^']*'|\\S*)`, 'g');
const FLAG = /^--?([A-Za-z][A-Za-z0-9_-]*)$/;

export function commandLineForLog(argv: readonly string[], options: readonly OptionSpec[]): LoggedCommandLine {
  const secrets: string[] = [];
  const out: string[] = [];

  const mask = (opt: OptionSpec, value: string): string => {
    const assignment = opt.sensitive === 'assignments' ? ASSIGNMENT.exec(value) : null;
    if (!assignment) {
      secrets.push(value);
      return NOT_LOGGED;
    }
    if (isSecretName(assignment[1]!)) secrets.push(assignment[2]!);
    return `${assignment[1]}=${NOT_LOGGED}`;
  };

  const dashDash = argv.indexOf('--');
  const before = dashDash === -1 ? argv : argv.slice(0, dashDash);
  for (let i = 0; i < before.length; i++) {
    const word = before[i]!;
    const opt = word.startsWith('-') && word !== '-' ? findOption(options, word) : undefined;
    if (!opt?.sensitive) {
      out.push(word);
      continue;
    }
    // The value attached (`--token=x`, `-eK=V`) or in the next word, as parse.ts reads them.
    const eq = word.indexOf('=');
    if (word.startsWith('--') && eq !== -1) out.push(`${word.slice(0, eq + 1)}${mask(opt, word.slice(eq + 1))}`);
    else if (!word.startsWith('--') && word.length > 2) out.push(`${word.slice(0, 2)}${mask(opt, word.slice(2))}`);
    else {
      out.push(word);
      if (i + 1 < before.length) out.push(mask(opt, before[++i]!));
    }
  }

  if (dashDash !== -1) {
    out.push('--');
    const rest = argv.slice(dashDash + 1);
    rest.forEach((word, i) => {
      const flag = i > 0 ? FLAG.exec(rest[i - 1]!) : null;
      if (flag && isSecretName(flag[1]!)) {
        secrets.push(word);
        out.push(NOT_LOGGED);
        return;
      }
      out.push(
        word.replace(INNER_ASSIGNMENT, (_m, space: string, name: string, value: string) => {
          if (isSecretName(name)) secrets.push(value.replace(/^(["'])([\s\S]*)\1$/, '$2'));
          return `${space}${name}=${NOT_LOGGED}`;
        }),
      );
    });
  }
  return { text: redactPatterns(out.join(' ')), secrets };
}
