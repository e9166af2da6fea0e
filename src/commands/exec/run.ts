import { DevtoolError } from '../../base/errors.ts';
import type { CommandHandler } from '../../cli/spec.ts';
import { readyDevPod } from '../../dev/activate.ts';
import { FOLDER_ANNOTATION, mirrorName } from '../../dev/names.ts';
import { findOriginal } from '../../dev/original.ts';
import { runSshProgram, shellJoin } from '../../dev/ssh-program.ts';
import { devTarget } from '../../dev/target.ts';
import { DevTunnel } from '../../dev/tunnel.ts';
import { devTargetQuery, type devContainerOptions } from '../shared.ts';

export const runExec: CommandHandler<typeof devContainerOptions> = async (f, inv) => {
  const t = await devTarget(f, devTargetQuery(inv));
  const inactive = () => new DevtoolError(`no dev container is active for ${t.devName} from this folder: run 'devtool up ${t.devName}' first`);
  const keys = t.state.readKeys();
  if (!keys) throw inactive();
  f.log.debug(`exec: keys in ${t.state.dir}`);
  const { isNotFound } = await import('../../kube/client.ts');
  const client = await f.kube(t);
  const original = await findOriginal(client, t.devName, t.dev);
  try {
    const mirror = await client.apps.readNamespacedDeployment({ name: mirrorName(original?.metadata.name ?? t.devName), namespace: t.namespace });
    if (mirror.metadata?.annotations?.[FOLDER_ANNOTATION] !== t.folder) {
      f.log.debug(`exec: mirror folder ${mirror.metadata?.annotations?.[FOLDER_ANNOTATION]} is not ${t.folder}`);
      throw inactive();
    }
  } catch (err) {
    if (isNotFound(err)) throw inactive();
    throw err;
  }
  if (!(await readyDevPod(client, t.devName)))
    throw new DevtoolError(`dev container ${t.devName} has no running pod right now (restarting?); try again, or 'devtool up ${t.devName}'`);
  const tunnel = new DevTunnel({ client, devName: t.devName, hostPublicKey: keys.host.publicKey, clientPrivateKey: keys.client.privateKey, log: f.log });
  try {
    await tunnel.start(30_000);
    const c = await tunnel.connection();
    return await runSshProgram(c, f.io, { command: shellJoin(inv.rest), pty: Boolean(f.io.stdin.isTTY && f.io.stdout.isTTY), term: f.env.TERM });
  } finally {
    tunnel.close();
  }
};
