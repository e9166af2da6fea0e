// The API contract (api/routes.ts, api/schemas.ts, api/dev-session.ts) in the CLI's bundles: as
// data, without TypeBox, whose load would cost a service command ~45 ms from node_modules (~4 ms bundled). The module is
// evaluated at build time, and the bundle gets its plain constants (strings, numbers, booleans,
// lists of them) and, of each route, what a client uses: method, path and its text stream mark.
// The schemas stay out; the CLI takes only their types. The programs in the cluster bundle it whole.
import { createRequire } from 'node:module';
import { relative, resolve } from 'node:path';
import { build } from 'esbuild';

const NAMESPACE = 'api-as-data';

/** The esbuild plugin (scripts/build.mjs): an import of api/routes.ts, api/schemas.ts or api/dev-session.ts gets apiData's module. */
export const apiAsData = {
  name: NAMESPACE,
  setup(b) {
    b.onResolve({ filter: /(^|\/)api\/(routes|schemas|dev-session)\.ts$/ }, (args) => ({
      path: relative(process.cwd(), resolve(args.resolveDir, args.path)),
      namespace: NAMESPACE,
    }));
    b.onLoad({ filter: /.*/, namespace: NAMESPACE }, async (args) => ({ contents: await apiData(args.path), loader: 'js' }));
  },
};

const evaluated = new Map();

/** `module.exports = {...}`: the plain values of the module at `file`, evaluated once per process. */
export function apiData(file) {
  const path = resolve(file);
  if (!evaluated.has(path)) evaluated.set(path, evaluate(path));
  return evaluated.get(path);
}

async function evaluate(path) {
  const { outputFiles } = await build({ entryPoints: [path], bundle: true, write: false, format: 'cjs', platform: 'node', logLevel: 'warning' });
  const module = { exports: {} };
  new Function('module', 'exports', 'require', outputFiles[0].text)(module, module.exports, createRequire(path));
  const plain = (v) => ['string', 'number', 'boolean'].includes(typeof v) || (Array.isArray(v) && v.every(plain));
  const data = {};
  for (const [name, value] of Object.entries(module.exports)) {
    if (name === 'routes') {
      data.routes = Object.fromEntries(
        Object.entries(value).map(([id, r]) => [id, { method: r.method, url: r.url, ...(r.textStream ? { textStream: true } : {}) }]),
      );
    } else if (plain(value)) data[name] = value;
  }
  return `module.exports = ${JSON.stringify(data)};`;
}
