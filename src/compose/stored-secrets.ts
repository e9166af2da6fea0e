/**
 * Stored secrets in `${NAME}` of Compose files (docs/compose.md, Variables):
 * the lowest-precedence source, under the shell and `.env`. The service is asked only when a file
 * references a variable that neither the shell nor `.env` sets: the files are loaded once without
 * stored secrets, hearing which names they would need, and again with them when there is one.
 */
import { type LoadOptions, loadCompose } from '../compose/load.ts';
import type { ComposeProject } from '../compose/model.ts';

/** The user's stored secrets, fetched at most once, and only when asked. */
export interface StoredSecrets {
  /**
   * Name -> value. `needed`: the variables the files reference that the shell and `.env` leave
   * unset, for the message. Throws a one-line DevtoolError when they cannot be had (an unreachable
   * service): never an empty value in silence.
   */
  values(needed: readonly string[]): Promise<Readonly<Record<string, string>>>;
}

/** Loads Compose files; `stored` fills the variables that the shell and `.env` leave unset. */
export async function loadComposeWithSecrets(options: LoadOptions, stored: StoredSecrets | undefined): Promise<ComposeProject> {
  if (!stored) return loadCompose(options);
  const wanted = new Set<string>();
  let first: ComposeProject | undefined;
  let failure: unknown;
  try {
    first = loadCompose({ ...options, onSecretLookup: (name) => wanted.add(name) });
  } catch (err) {
    // `${NAME:?required}` fails without stored secrets: the names heard so far still count.
    failure = err;
  }
  if (wanted.size === 0) {
    if (first) return first;
    throw failure;
  }
  const secrets = await stored.values([...wanted].sort());
  if (![...wanted].some((name) => Object.hasOwn(secrets, name))) {
    if (first) return first;
    throw failure;
  }
  return loadCompose({ ...options, secrets });
}

/** Memoizes a fetch of stored secrets: one call to the service per command, whatever asks. */
export function storedSecretsOnce(fetchValues: (needed: readonly string[]) => Promise<Readonly<Record<string, string>>>): StoredSecrets {
  let pending: Promise<Readonly<Record<string, string>>> | undefined;
  return {
    values: (needed) => {
      pending ??= fetchValues(needed);
      return pending;
    },
  };
}
