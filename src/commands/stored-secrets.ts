/**
 * The user's stored secrets for `deploy`, from the service of the context (a service context with
 * a token; none on a plain cluster). Values never reach the terminal, devtool.log or an error: the
 * log hides them from the moment they are read, `scrub` takes them out of an error's text and
 * `scrubText` out of progress lines (the terminal and the transcript recorded in the cluster).
 * A dry run asks for the names only and shows `<stored secret NAME>` in place of each value.
 */
import { DevtoolError } from '../base/errors.ts';
import type { ResolvedContext } from '../context/store.ts';
import { type StoredSecrets, storedSecretsOnce } from '../compose/stored-secrets.ts';
import type { Factory } from '../factory.ts';
import { KnownValues, NOT_LOGGED } from '../log/redact.ts';

export interface DeploySecrets {
  stored?: StoredSecrets;
  /** The error with every stored value read so far replaced by ***. */
  scrub(err: unknown): unknown;
  /** The text with every stored value read so far replaced by *** (progress lines). */
  scrubText(text: string): string;
}

export function deploySecrets(f: Pick<Factory, 'service' | 'log'>, context: ResolvedContext | undefined, mode: 'values' | 'placeholders'): DeploySecrets {
  const known = new KnownValues();
  const scrubText = (text: string): string => known.replace(text, NOT_LOGGED);
  const scrub = (err: unknown): unknown => {
    if (err instanceof Error) {
      err.message = scrubText(err.message);
      if (err.stack) err.stack = scrubText(err.stack);
    }
    return err;
  };
  if (!context?.isDevtool || !context.token) return { scrub, scrubText };
  const url = context.name;
  const token = context.token;
  const stored = storedSecretsOnce(async (needed) => {
    const client = await f.service({ url, token });
    try {
      if (mode === 'placeholders') {
        const { secrets } = await client.call('listSecrets');
        return Object.fromEntries(secrets.map(({ name }) => [name, `<stored secret ${name}>`]));
      }
      const { values } = await client.call('secretValues');
      f.log.hide(Object.values(values));
      known.add(Object.values(values));
      f.log.debug(`stored secrets: ${Object.keys(values).length} read from ${url} (needed: ${needed.join(', ')})`);
      return values;
    } catch (err) {
      const vars = needed.map((n) => `\${${n}}`).join(', ');
      throw new DevtoolError(
        `${vars} ${needed.length === 1 ? 'is' : 'are'} set by neither the shell nor .env, and the stored secrets cannot be read: ${(err as Error).message}`,
      );
    }
  });
  return { stored, scrub, scrubText };
}
