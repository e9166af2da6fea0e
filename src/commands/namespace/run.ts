import { DevtoolError, UsageError } from '../../base/errors.ts';
import type { CommandHandler } from '../../cli/spec.ts';
import type { Factory } from '../../factory.ts';
import { describeKubeError } from '../../kube/config.ts';
import { checkNamespaceName } from '../../kube/naming.ts';
import { requireServiceContext } from '../require-service.ts';

const USE_HINT = 'pass the namespace: devtool namespace use <NAMESPACE>';

export const runNamespaceUse: CommandHandler = async (f, inv) => {
  await useNamespace(f, checkNamespaceName(inv.requireArg(0, 'NAMESPACE')));
};

/** `devtool namespace`: pick one of the cluster's namespaces. */
export const runNamespacePrompt: CommandHandler = async (f) => {
  if (!f.interactive) throw new UsageError(`no terminal to prompt on: ${USE_HINT}`);
  const ctx = await f.contexts.requireCurrent();
  if (ctx.isDevtool) await requireServiceContext(f, 'namespace', 'namespace management');
  const { withTimeout } = await import('../../kube/client.ts');
  const client = await f.kube({ context: ctx });
  let names: string[];
  try {
    names = (await withTimeout(client.core.listNamespace(), 15_000, `listing the namespaces of ${ctx.name}`)).items
      .map((n) => n.metadata?.name ?? '')
      .filter(Boolean);
  } catch (err) {
    throw new DevtoolError(`cannot list the namespaces of ${ctx.name}: ${describeKubeError(err)}; ${USE_HINT}`);
  }
  const picked = await f.prompter.select(
    'Select the namespace to use',
    names.map((n) => ({ name: n === ctx.namespace ? `${n} *` : n, value: n })),
    USE_HINT,
    ctx.namespace,
  );
  await useNamespace(f, picked);
};

/** create, delete and list exist only on clusters with the devtool service. */
export const runNamespaceServiceOnly: CommandHandler = async (f, inv) => {
  if (inv.args[0] !== undefined) checkNamespaceName(inv.args[0]);
  await requireServiceContext(f, inv.commandName, 'namespace management');
};

async function useNamespace(f: Factory, namespace: string): Promise<void> {
  const ctx = await f.contexts.setNamespace(namespace);
  f.io.stdout.write(`Using namespace "${ctx.namespace}" @ ${ctx.name} (${ctx.host || 'unknown host'})\n`);
}
