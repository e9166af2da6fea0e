/**
 * Kubeconfig files, read and written as kubectl does: KUBECONFIG may list several files, merged so
 * that the first file to define a name wins and the first `current-context` wins; a change to an
 * entry is written back to the file that defined it (new entries go to the first file). Files are
 * edited as YAML documents, so other entries, comments and ordering survive.
 * This is a small reader on purpose: listing contexts must not load the Kubernetes client, and the
 * YAML library is loaded only when a kubeconfig is read (it costs more start-up time than the rest).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { Document } from 'yaml';
import { DevtoolError } from '../base/errors.ts';
import { userHome } from '../base/platform.ts';
import { writeFileAtomic } from '../io/atomic-file.ts';

export interface KubeContext {
  name: string;
  cluster: string;
  user: string;
  namespace?: string;
  /** The cluster's API server URL, when the cluster entry is found. */
  server?: string;
  /** True when the user entry carries any credential (token, client cert, exec or auth provider). */
  hasCredentials: boolean;
  /** The file that defines this context. */
  file: string;
}

export interface MergedKubeconfig {
  files: string[];
  currentContext?: string;
  contexts: KubeContext[];
}

export function kubeconfigPaths(env: Readonly<NodeJS.ProcessEnv>): string[] {
  const list = (env.KUBECONFIG ?? '').split(delimiter).filter((p) => p.trim() !== '');
  if (list.length) return list;
  return [join(userHome(env), '.kube', 'config')];
}

type Entry = Record<string, unknown>;

interface RawFile {
  path: string;
  doc: Document;
  data: {
    contexts?: { name: string; context?: Entry }[];
    clusters?: { name: string; cluster?: Entry }[];
    users?: { name: string; user?: Entry }[];
    'current-context'?: string;
  };
}

type YamlModule = typeof import('yaml');

/**
 * yaml is CommonJS. Node's import() exposes its exports as named exports, but in the esbuild
 * bundle (code splitting) the chunk only has a default export holding them: accept both.
 */
const yaml = async (): Promise<YamlModule> => {
  const m = (await import('yaml')) as YamlModule & { default?: YamlModule };
  return typeof m.parseDocument === 'function' ? m : m.default!;
};

async function readFile(path: string): Promise<RawFile | undefined> {
  if (!existsSync(path) || statSync(path).isDirectory()) return undefined;
  const text = readFileSync(path, 'utf8');
  const doc = (await yaml()).parseDocument(text);
  if (doc.errors.length) {
    const e = doc.errors[0]!;
    const pos = e.linePos?.[0];
    throw new DevtoolError(`${path}${pos ? `:${pos.line}:${pos.col}` : ''}: invalid kubeconfig: ${e.message.split('\n')[0]}`);
  }
  const data = (doc.toJS() ?? {}) as RawFile['data'];
  if (typeof data !== 'object' || Array.isArray(data)) throw new DevtoolError(`${path}: invalid kubeconfig: expected a mapping`);
  return { path, doc, data };
}

export async function loadKubeconfig(env: Readonly<NodeJS.ProcessEnv>): Promise<MergedKubeconfig> {
  const files = kubeconfigPaths(env);
  const clusters = new Map<string, Entry>();
  const users = new Map<string, Entry>();
  const contexts: { name: string; ctx: Entry; file: string }[] = [];
  const seen = new Set<string>();
  let currentContext: string | undefined;
  for (const path of files) {
    const raw = await readFile(path);
    if (!raw) continue;
    currentContext ||= raw.data['current-context'] || undefined;
    for (const c of raw.data.clusters ?? []) if (c?.name && !clusters.has(c.name)) clusters.set(c.name, c.cluster ?? {});
    for (const u of raw.data.users ?? []) if (u?.name && !users.has(u.name)) users.set(u.name, u.user ?? {});
    for (const c of raw.data.contexts ?? []) {
      if (!c?.name || seen.has(c.name)) continue;
      seen.add(c.name);
      contexts.push({ name: c.name, ctx: c.context ?? {}, file: path });
    }
  }
  return {
    files,
    currentContext,
    contexts: contexts.map(({ name, ctx, file }) => {
      const cluster = String(ctx.cluster ?? '');
      const user = String(ctx.user ?? '');
      const u = users.get(user) ?? {};
      const server = clusters.get(cluster)?.server;
      return {
        name,
        cluster,
        user,
        ...(typeof ctx.namespace === 'string' && ctx.namespace ? { namespace: ctx.namespace } : {}),
        ...(typeof server === 'string' ? { server } : {}),
        hasCredentials: ['token', 'tokenFile', 'client-certificate', 'client-certificate-data', 'exec', 'auth-provider', 'password'].some((k) => k in u),
        file,
      };
    }),
  };
}

/**
 * Sets the namespace of a context (and, with `makeCurrent`, the current-context) in the file that
 * defines it. Returns that file. Everything else in the file is kept as it was.
 */
export async function updateKubeconfigContext(
  env: Readonly<NodeJS.ProcessEnv>,
  contextName: string,
  change: { namespace?: string; makeCurrent?: boolean },
): Promise<string> {
  const { isMap, isSeq, parseDocument, YAMLMap } = await yaml();
  const merged = await loadKubeconfig(env);
  const ctx = merged.contexts.find((c) => c.name === contextName);
  if (!ctx) throw new DevtoolError(`context "${contextName}" is not in the kubeconfig (${merged.files.join(delimiter)})`);
  const raw = (await readFile(ctx.file))!;
  const seq = raw.doc.get('contexts');
  if (!isSeq(seq)) throw new DevtoolError(`${ctx.file}: invalid kubeconfig: contexts is not a list`);
  const item = seq.items.find((i) => isMap(i) && i.get('name') === contextName);
  if (!isMap(item)) throw new DevtoolError(`${ctx.file}: context "${contextName}" not found`);
  let body = item.get('context');
  if (!isMap(body)) {
    body = new YAMLMap();
    item.set('context', body);
  }
  if (change.namespace !== undefined) (body as InstanceType<typeof YAMLMap>).set('namespace', change.namespace);
  // kubectl keeps current-context in the first file of the list.
  let currentFile: RawFile | undefined;
  if (change.makeCurrent) {
    if (merged.files[0] === ctx.file) raw.doc.set('current-context', contextName);
    else currentFile = await readFile(merged.files[0]!);
  }
  writeFileAtomic(ctx.file, raw.doc.toString(), fileMode(ctx.file));
  if (change.makeCurrent && merged.files[0] !== ctx.file) {
    const first = merged.files[0]!;
    const doc = currentFile?.doc ?? parseDocument('apiVersion: v1\nkind: Config\n');
    doc.set('current-context', contextName);
    writeFileAtomic(first, doc.toString(), currentFile ? fileMode(first) : 0o600);
  }
  return ctx.file;
}

function fileMode(path: string): number {
  return statSync(path).mode & 0o777;
}

/** A kubeconfig entry devtool writes for a service context: cluster, user and context of one name. */
export interface KubeconfigEntry {
  name: string;
  server: string;
  /** PEM of the API server's CA. */
  certificateAuthority: string;
  namespace: string;
  /** The user's credential plugin (client.authentication.k8s.io/v1): kubectl runs it for a token. */
  exec: { command: string; args: string[]; env: { name: string; value: string }[] };
}

/**
 * Writes (or replaces) the cluster, user and context named `entry.name`, each in the file that
 * defines it (new ones in the first file), and makes the context current. Returns the context's file.
 */
export async function writeKubeconfigEntry(env: Readonly<NodeJS.ProcessEnv>, entry: KubeconfigEntry): Promise<string> {
  const { isMap, isScalar, isSeq, parseDocument, visit } = await yaml();
  const files = kubeconfigPaths(env);
  const docs = new Map<string, Document>();
  const docOf = async (path: string): Promise<Document> => {
    let doc = docs.get(path);
    if (!doc) {
      doc = (await readFile(path))?.doc ?? parseDocument('apiVersion: v1\nkind: Config\n');
      docs.set(path, doc);
    }
    return doc;
  };
  /** The file whose `section` has an item named entry.name, else the first file. */
  const fileFor = async (section: string): Promise<string> => {
    for (const path of files) {
      const seq = (await readFile(path))?.doc.get(section);
      if (isSeq(seq) && seq.items.some((i) => isMap(i) && i.get('name') === entry.name)) return path;
    }
    return files[0]!;
  };
  const put = async (section: string, key: string, value: Entry): Promise<string> => {
    const path = await fileFor(section);
    const doc = await docOf(path);
    let seq = doc.get(section);
    if (!isSeq(seq)) {
      doc.set(section, doc.createNode([]));
      seq = doc.get(section);
    }
    if (!isSeq(seq)) throw new DevtoolError(`${path}: invalid kubeconfig: ${section} is not a list`);
    const node = doc.createNode({ name: entry.name, [key]: value });
    // Quoted: kubectl reads YAML 1.1, where a plain 127_0_0_1_8080 (a name made from a host) is a number.
    visit(node, {
      Pair(_, pair) {
        if (isScalar(pair.value) && typeof pair.value.value === 'string') pair.value.type = 'QUOTE_DOUBLE';
      },
    });
    const at = seq.items.findIndex((i) => isMap(i) && i.get('name') === entry.name);
    if (at >= 0) seq.items[at] = node;
    else seq.items.push(node);
    return path;
  };
  await put('clusters', 'cluster', { server: entry.server, 'certificate-authority-data': Buffer.from(entry.certificateAuthority).toString('base64') });
  await put('users', 'user', {
    exec: {
      apiVersion: 'client.authentication.k8s.io/v1',
      command: entry.exec.command,
      args: entry.exec.args,
      env: entry.exec.env.length ? entry.exec.env : null,
      interactiveMode: 'Never',
      provideClusterInfo: false,
    },
  });
  const contextFile = await put('contexts', 'context', { cluster: entry.name, user: entry.name, namespace: entry.namespace });
  // kubectl keeps current-context in the first file of the list.
  const firstDoc = await docOf(files[0]!);
  const current = firstDoc.createNode(entry.name);
  current.type = 'QUOTE_DOUBLE';
  firstDoc.set('current-context', current);
  // lineWidth 0: the CA's long base64 stays one line rather than a folded quoted scalar.
  for (const [path, doc] of docs) writeFileAtomic(path, doc.toString({ lineWidth: 0 }), existsSync(path) ? fileMode(path) : 0o600);
  return contextFile;
}
