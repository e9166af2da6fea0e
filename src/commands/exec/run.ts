import type { CommandHandler } from '../../cli/spec.ts';
import { type ExecApi, execApi, execTunnel, inactive } from '../../dev/exec.ts';
import { runSshProgram, shellJoin } from '../../dev/ssh-program.ts';
import { devTarget } from '../../dev/target.ts';
import type { Factory } from '../../factory.ts';
import type { KubeTarget } from '../../kube/target.ts';
import { devTargetQuery, type devContainerOptions } from '../shared.ts';

export const runExec = execHandler(async (f, target) => execApi(await f.kube(target), f.log));

/** The handler, acting on the namespace `clusterOf` gives (the real one above; an in-memory one in its test). */
export function execHandler(clusterOf: (f: Factory, target: KubeTarget) => Promise<ExecApi>): CommandHandler<typeof devContainerOptions> {
  return async (f, inv) => {
    const t = await devTarget(f, devTargetQuery(inv));
    const keys = t.state.readKeys();
    if (!keys) throw inactive(t.devName);
    f.log.debug(`exec: keys in ${t.state.dir}`);
    const cluster = await clusterOf(f, t);
    const tunnel = await execTunnel(cluster, t, { hostPublicKey: keys.host.publicKey, clientPrivateKey: keys.client.privateKey }, f.log);
    try {
      await tunnel.start(30_000);
      const c = await tunnel.connection();
      return await runSshProgram(c, f.io, { command: shellJoin(inv.rest), pty: Boolean(f.io.stdin.isTTY && f.io.stdout.isTTY), term: f.env.TERM });
    } finally {
      tunnel.close();
    }
  };
}
