/**
 * Accounts: a user, its personal namespace `<name>-devtool` and a first API token, made together
 * or not at all. Used by the operator command `create-user`; sign-up on the service's page makes
 * one with a password instead of a first token. Disabled, enabled and deleted by the operator
 * commands and the admin routes (routes/users.ts).
 */
import { DNS_LABEL_RULE, isDnsLabel } from '../api/dns-label.ts';
import { PERSONAL_SUFFIX, USER_NAME_MAX } from '../api/routes.ts';
import { ApiError } from './errors.ts';
import { ConflictError, type Store, type UserRecord } from './store/store.ts';
import { newToken } from './tokens.ts';

export const personalNamespace = (user: string) => `${user}${PERSONAL_SUFFIX}`;

/** null when the name is a valid user name, else why not (one line). */
export function userNameProblem(name: string): string | null {
  if (!isDnsLabel(name)) return `invalid user name "${name}": ${DNS_LABEL_RULE}`;
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
  let token = '';
  await makeAccount(store, name, admin, async () => {
    const made = newToken(name, 'created with the account', now);
    await store.addToken(made.record);
    token = made.token;
  });
  return { name, admin, namespace: personalNamespace(name), token };
}

/** Sign-up on the service's page: a (non-admin) account with its password, no first token. */
export async function createAccountWithPassword(store: Store, name: string, passwordHash: string): Promise<void> {
  await makeAccount(store, name, false, () => store.setPasswordHash(name, passwordHash));
}

/** The user, its namespace, then `finish`; when a step fails, what was made is removed. */
async function makeAccount(store: Store, name: string, admin: boolean, finish: () => Promise<void>): Promise<void> {
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
    await finish();
  } catch (err) {
    await store.deleteNamespace(namespace).catch(() => {});
    await store.deleteUser(name).catch(() => {});
    if (err instanceof ConflictError) throw new ApiError(409, err.message);
    throw err;
  }
}

/**
 * Disables the account: its tokens are deleted (and with them every Kubernetes token bound to
 * one), and from then on its sessions, sign-ins and any token are refused. Its namespaces, stored
 * secrets and password stay, for enableAccount.
 */
export async function disableAccount(store: Store, name: string): Promise<void> {
  if (!(await store.setUserDisabled(name, true))) throw new ApiError(404, `no user ${name}`);
  await store.deleteTokens(name);
}

/** Enables a disabled account again; `withToken`: a new API token for it (the operator hands it over). */
export async function enableAccount(store: Store, name: string, now: Date, withToken: boolean): Promise<string | undefined> {
  if (!(await store.setUserDisabled(name, false))) throw new ApiError(404, `no user ${name}`);
  if (!withToken) return undefined;
  const made = newToken(name, 'created when the account was enabled', now);
  await store.addToken(made.record);
  return made.token;
}

/**
 * Deletes the account and everything it owns: its access ends first (as disableAccount), then every
 * namespace it owns is deleted (its personal namespace, those it created, its previews, global
 * ones too: no destroy run is made, Kubernetes removes their contents), then the account with its
 * tokens, password and stored secrets. Keeping a namespace would keep its RoleBinding to the
 * account's ServiceAccount name, which a new account of the same name would inherit. Answers the
 * namespaces deleted.
 */
export async function deleteAccount(store: Store, name: string): Promise<string[]> {
  await disableAccount(store, name);
  const owned = await store.listNamespaces(name);
  for (const ns of owned) if (ns.status !== 'Terminating') await store.deleteNamespace(ns.name);
  await store.deleteUser(name);
  return owned.map((ns) => ns.name);
}

/** Refuses a caller who is not an admin (`what`: "list", "create"...). */
export function requireAdmin(caller: UserRecord, what: string): void {
  if (!caller.admin) throw new ApiError(403, `only admins can ${what} users`);
}

/**
 * The user an admin acts on: never the caller's own account, so an admin cannot lock themselves
 * out and the last admin stays one. Used by the admin routes and the dashboard's admin page.
 */
export function otherUser(caller: UserRecord, name: string, what: string): string {
  requireAdmin(caller, what);
  if (name === caller.name) throw new ApiError(409, `you cannot ${what} your own account: ask another admin`);
  return name;
}
