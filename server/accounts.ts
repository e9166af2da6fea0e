/**
 * Accounts: a user, its personal namespace `<name>-devtool` and a first API token, made together
 * or not at all. Used by the operator command `create-user` (and by sign-up, later).
 */
import { NAME_PATTERN, NAME_RULE, PERSONAL_SUFFIX, USER_NAME_MAX } from '../src/service/contract.ts';
import { ApiError } from './errors.ts';
import { ConflictError, type Store } from './store/store.ts';
import { newToken } from './tokens.ts';

export const personalNamespace = (user: string) => `${user}${PERSONAL_SUFFIX}`;

/** null when the name is a valid user name, else why not (one line). */
export function userNameProblem(name: string): string | null {
  if (!new RegExp(NAME_PATTERN).test(name)) return `invalid user name "${name}": ${NAME_RULE}`;
  if (name.length > USER_NAME_MAX) return `invalid user name "${name}": at most ${USER_NAME_MAX} characters (its namespace is <name>${PERSONAL_SUFFIX})`;
  return null;
}

export interface CreatedAccount {
  name: string;
  admin: boolean;
  namespace: string;
  token: string;
}

export async function createAccount(store: Store, name: string, admin: boolean, now: Date): Promise<CreatedAccount> {
  const problem = userNameProblem(name);
  if (problem) throw new ApiError(400, problem);
  if (await store.getUser(name)) throw new ApiError(409, `user ${name} already exists`);
  const namespace = personalNamespace(name);
  if (await store.namespaceExists(namespace)) throw new ApiError(409, `namespace ${namespace}, the personal namespace of ${name}, is taken`);
  try {
    await store.createUser({ name, admin });
  } catch (err) {
    if (err instanceof ConflictError) throw new ApiError(409, err.message);
    throw err;
  }
  try {
    await store.createNamespace({ name: namespace, owner: name, personal: true });
    const { token, record } = newToken(name, 'created with the account', now);
    await store.addToken(record);
    return { name, admin, namespace, token };
  } catch (err) {
    await store.deleteNamespace(namespace).catch(() => {});
    await store.deleteUser(name).catch(() => {});
    if (err instanceof ConflictError) throw new ApiError(409, err.message);
    throw err;
  }
}
