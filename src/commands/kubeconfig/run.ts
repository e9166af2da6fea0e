import type { CommandHandler } from '../../cli/spec.ts';
import { updateKubeconfigContext } from '../../context/kubeconfig.ts';
import { requireServiceContext } from '../require-service.ts';

export const runKubeconfig: CommandHandler = async (f) => {
  const ctx = await f.contexts.requireCurrent();
  if (ctx.isDevtool) await requireServiceContext(f, 'kubeconfig', 'downloading cluster credentials');
  const file = await updateKubeconfigContext(f.env, ctx.name, { namespace: ctx.namespace, makeCurrent: true });
  f.io.stdout.write(`Updated context "${ctx.name}" (namespace "${ctx.namespace}") in ${file}\n`);
};
