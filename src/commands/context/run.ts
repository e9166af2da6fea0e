import { DevtoolError, UsageError } from '../../base/errors.ts';
import { hostPlatform } from '../../base/platform.ts';
import type { CommandHandler, OptionValues } from '../../cli/spec.ts';
import type { ResolvedContext, StoredContext } from '../../context/store.ts';
import type { Factory } from '../../factory.ts';
import { formatTable } from '../../io/table.ts';
import { checkNamespaceName, dnsSubdomain } from '../../kube/naming.ts';
import { CLOUD_URL, looksLikeUrl, normalizeServiceUrl } from '../../service/cloud.ts';
import { routes } from '../../../api/routes.ts';
import type { contextOptions } from './spec.ts';

const USE_HINT = 'pass the context: devtool context use <URL_OR_CLUSTER_CONTEXT>';
const CREATE = '\u0000create';

export const runContextUse: CommandHandler<typeof contextOptions> = async (f, inv) => {
  const target = inv.args[0] ?? (await promptForContext(f));
  await selectContext(f, inv.opts, target);
};

/**
 * `devtool context [URL]`: select an existing context or create one. Without a terminal it needs
 * no prompt when it is told which service: a URL argument, else DEVTOOL_URL, else (with --token,
 * the documented non-interactive form) the default service URL DEVTOOL_URL stands for.
 */
export const runContextPrompt: CommandHandler<typeof contextOptions> = async (f, inv) => {
  const envUrl = f.env.DEVTOOL_URL?.trim();
  const target = inv.args[0] ?? (envUrl || (inv.opts.token !== undefined && !f.interactive ? CLOUD_URL : undefined));
  await selectContext(f, inv.opts, target ?? (await promptForContext(f)));
};

export const runContextList: CommandHandler = async (f) => {
  const current = await f.contexts.current();
  const listed = await f.contexts.list();
  // The current context from DEVTOOL_URL / DEVTOOL_TOKEN is a row too, as `context show` shows it.
  const contexts =
    current?.source === 'environment'
      ? listed.some((c) => c.name === current.name)
        ? listed.map((c) => (c.name === current.name ? current : c))
        : [...listed, current]
      : listed;
  const rows = contexts.map((c) => [c.name === current?.name ? `${c.name} *` : c.name, c.namespace, builderOf(c), c.registry || '-']);
  f.io.stdout.write(formatTable(['Name', 'Namespace', 'Builder', 'Registry'], rows));
};

export const runContextShow: CommandHandler = async (f) => {
  const c = await f.contexts.requireCurrent();
  const shown = {
    name: c.name,
    token: c.token || c.kube?.hasCredentials ? 'REDACTED' : '',
    namespace: c.namespace,
    builder: builderOf(c),
    registry: c.registry || '-',
    isDevtool: c.isDevtool,
  };
  f.io.stdout.write(`${JSON.stringify(shown, null, 2)}\n`);
};

export const runContextDelete: CommandHandler = async (f, inv) => {
  const name = inv.requireArg(0, 'CONTEXT_URL_OR_NAME');
  if (!f.contexts.delete(name)) {
    const kube = await f.contexts.findKubeContext(name);
    throw new DevtoolError(
      kube
        ? `context "${name}" has no devtool settings to delete; it is defined by ${kube.file} (remove it there with 'kubectl config delete-context ${name}')`
        : `context "${name}" not found; 'devtool context list' shows the known contexts`,
    );
  }
  f.io.stdout.write(`Context "${name}" deleted\n`);
};

/**
 * Where builds go: on a service context, the service's hosted builder, reached through its build
 * tunnel (image/select.ts; BUILDKIT_HOST still wins there), else the context's daemon or docker.
 */
function builderOf(c: ResolvedContext): string {
  if (c.isDevtool) return `${c.name.replace(/\/+$/, '')}${routes.buildTunnel.url}`;
  return c.builder || 'docker';
}

async function promptForContext(f: Factory): Promise<string> {
  if (!f.interactive) throw new UsageError(`no terminal to prompt on: ${USE_HINT}`);
  const current = (await f.contexts.current())?.name;
  const choices = (await f.contexts.list()).map((c) => ({
    name: c.name === current ? `${c.name} *` : c.name,
    value: c.name,
    description: `${c.host || 'no host'} (namespace ${c.namespace})`,
  }));
  const picked = await f.prompter.select(
    'Select the context to use',
    [...choices, { name: 'Create a new context (devtool service URL)', value: CREATE }],
    USE_HINT,
    current,
  );
  if (picked !== CREATE) return picked;
  return f.prompter.input('URL of the devtool service', USE_HINT, (v) => (looksLikeUrl(v) ? true : 'enter a URL, like https://devtool.example.com'));
}

/**
 * The token stored for `url` while the service accepts it; undefined when there is none or it was
 * refused (then a login follows), except in CI, where a refused token is one line, never a login.
 */
async function storedTokenAccepted(f: Factory, url: string): Promise<string | undefined> {
  const stored = f.contexts.read().contexts[url]?.token;
  if (!stored) return undefined;
  try {
    await (await f.service({ url, token: stored })).call('me');
    return stored;
  } catch (err) {
    if ((err as { status?: unknown }).status !== 401) throw err;
    const { ciLoginRefusal, inCi } = await import('../../service/login/login.ts');
    if (inCi(f.env)) throw ciLoginRefusal(url, `the token stored for ${url} was refused (${(err as Error).message})`);
    return undefined;
  }
}

/** A login (browser or device code; never in CI): the new API token. */
async function loginToken(f: Factory, url: string): Promise<string> {
  const { logIn, loginClient } = await import('../../service/login/login.ts');
  const { hostname } = process.getBuiltinModule('node:os');
  const r = await logIn({
    url,
    client: loginClient(await f.service({ url })),
    host: { env: f.env, platform: hostPlatform, interactive: f.interactive },
    machine: hostname(),
    say: (text) => f.io.stderr.write(text),
  });
  return r.token;
}

async function selectContext(f: Factory, opts: OptionValues<typeof contextOptions>, target: string): Promise<void> {
  const namespace = opts.namespace;
  if (namespace !== undefined) checkNamespaceName(namespace);
  const builder = opts.builder;
  if (builder !== undefined && builder !== 'docker' && !/^tcp:\/\/[^/:]+:\d+$/.test(builder)) {
    throw new UsageError(`invalid value "${builder}" for flag --builder: expected tcp://HOST:PORT or docker`);
  }
  const settings: Omit<StoredContext, 'name' | 'isDevtool'> = {
    ...(namespace !== undefined ? { namespace } : {}),
    ...(builder !== undefined ? { builder: builder === 'docker' ? undefined : builder } : {}),
    ...(opts.registry !== undefined ? { registry: opts.registry } : {}),
    ...(opts.endpointDomain !== undefined ? { endpointDomain: opts.endpointDomain } : {}),
    ...(opts.ingressClass !== undefined ? { ingressClass: checkIngressClass(opts.ingressClass) } : {}),
  };

  const kube = await f.contexts.findKubeContext(target);
  if (kube) {
    if (opts.token !== undefined)
      throw new UsageError(`--token is for devtool service contexts; "${target}" is a kubeconfig context whose credentials come from ${kube.file}`);
    const ctx = await f.contexts.use(target, { ...settings, isDevtool: false });
    f.io.stdout.write(`Using context ${ctx.name}: namespace "${ctx.namespace}" @ ${ctx.host || 'unknown host'}\n`);
    return;
  }
  if (!looksLikeUrl(target)) {
    const known = (await f.contexts.list()).map((c) => c.name);
    throw new DevtoolError(
      `context "${target}" not found: it is neither a kubeconfig context nor a URL${known.length ? `; known contexts: ${known.join(', ')}` : ''}`,
    );
  }
  const url = normalizeServiceUrl(target);
  let token = opts.token ?? (f.env.DEVTOOL_TOKEN?.trim() || undefined) ?? (await storedTokenAccepted(f, url));
  if (!token) {
    // As before the login existed: the context is stored and selected first, so that a failed
    // login leaves it there to retry (or to delete).
    const ctx = await f.contexts.use(url, { ...settings, isDevtool: true });
    // No namespace yet: the user's own is known only once logged in (the line after the login names it).
    f.io.stdout.write(`Stored context ${ctx.name}: logging in\n`);
    try {
      token = await loginToken(f, url);
    } catch (err) {
      // The service client is its own bundle (dist/service-client.cjs) with its own DevtoolError class: told apart by shape.
      if (!(err instanceof Error) || typeof (err as { exitCode?: unknown }).exitCode !== 'number') throw err;
      throw new DevtoolError(`cannot log in to ${url}: ${err.message} (the context is stored and selected; 'devtool context delete ${url}' removes it)`);
    }
  }
  // The token is checked before anything is stored: a refused token leaves the contexts as they were.
  const client = await f.service({ url, token });
  const [me, info] = await Promise.all([client.call('me'), client.call('info')]);
  const stored = f.contexts.read().contexts[url];
  const announcedBuilder = info.builder && /^tcp:\/\/[^/:]+:\d+$/.test(info.builder) ? info.builder : undefined;
  const ctx = await f.contexts.use(url, {
    ...settings,
    isDevtool: true,
    token,
    userId: me.name,
    namespace: settings.namespace ?? stored?.namespace ?? me.namespace,
    ...(settings.registry === undefined && info.registry ? { registry: info.registry } : {}),
    ...(builder === undefined && announcedBuilder ? { builder: announcedBuilder } : {}),
    ...(info.endpointDomain ? { endpointDomain: info.endpointDomain } : {}),
    // --ingress-class, else the service's word: a class it no longer announces is dropped (undefined deletes it).
    ingressClass: settings.ingressClass ?? info.ingressClass,
    // Announced over a connection already trusted (system roots, DEVTOOL_CA_CERT, or the stored CA).
    ...(info.certificate ? { certificate: info.certificate } : {}),
  });
  f.io.stdout.write(`Using context ${ctx.name} as ${me.name}: namespace "${ctx.namespace}" @ ${ctx.host}\n`);
}

function checkIngressClass(name: string): string {
  if (name.length > 253 || !dnsSubdomain.test(name)) {
    throw new UsageError(`invalid value "${name}" for flag --ingress-class: expected an IngressClass name (lower-case letters, digits, '-' and '.')`);
  }
  return name;
}
