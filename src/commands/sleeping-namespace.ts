/**
 * What `up` and `deploy` do about a namespace the devtool service put to sleep (docs/service.md,
 * "Sleeping namespaces"): `up` refuses it before touching anything, `deploy` wakes it first (a
 * deploy is activity). Only on a logged-in service context; a plain cluster has no sleep.
 */
import type { NamespaceSleepBody } from '../../api/routes.ts';
import { DevtoolError } from '../base/errors.ts';
import type { ResolvedContext } from '../context/store.ts';
import type { Factory } from '../factory.ts';

type SleepEnv = Pick<Factory, 'service' | 'log'>;

/** The namespace's sleep as the service lists it; undefined when awake, on a plain cluster, or not one of the user's. */
async function sleepOf(f: SleepEnv, context: ResolvedContext, namespace: string): Promise<NamespaceSleepBody | undefined> {
  if (!context.isDevtool || !context.token) return undefined;
  const client = await f.service({ url: context.name, token: context.token });
  try {
    return (await client.call('listNamespaces')).namespaces.find((n) => n.name === namespace)?.sleep;
  } catch (err) {
    // The command goes on as it would without the service; whatever is wrong there, it says itself.
    f.log.debug(`reading the sleep of namespace ${namespace} failed: ${(err as Error).message}`);
    return undefined;
  }
}

/** `up`: a sleeping namespace is refused in one line naming the wake. */
export async function refuseSleepingNamespace(f: SleepEnv, context: ResolvedContext, namespace: string): Promise<void> {
  const sleep = await sleepOf(f, context, namespace);
  if (sleep?.state !== 'Sleeping') return;
  const by = sleep.by ? `, put to sleep by ${sleep.by}` : '';
  throw new DevtoolError(`namespace ${namespace} is asleep (since ${sleep.since}${by}): wake it with 'devtool namespace wake ${namespace}'`);
}

/** `deploy`: a sleeping namespace is woken first, said in one line on stderr. */
export async function wakeSleepingNamespace(f: SleepEnv & Pick<Factory, 'io'>, context: ResolvedContext, namespace: string): Promise<void> {
  const sleep = await sleepOf(f, context, namespace);
  if (sleep?.state !== 'Sleeping') return;
  const client = await f.service({ url: context.name, token: context.token! });
  await client.call('wakeNamespace', { params: { name: namespace } });
  f.io.stderr.write(`namespace ${namespace} was asleep (since ${sleep.since}): woken for this deploy\n`);
}
