// The layers of src/, checked by dependency-cruiser in `npm run lint` (docs/architecture.md, Layers).
// One ordered list, ground floor first. A layer may import itself and the layers below it, never a
// layer above. server/ (the service program) sits beside them: it may import base/ and version.ts
// of src/, and nothing of src/ imports it. api/ (the API contract: routes, schemas, the OpenAPI
// document) is a package of its own that the CLI and the server both import; it imports neither.
// Folders of one layer may import each other in one direction only: no folder loop.
// An entry is a folder of src/ or a file (a file inside a folder that is an entry of its own belongs
// to that entry's layer, not to its folder's). Only production code is checked:
// tests (*.test.ts) may reach across layers, nothing imports them.
'use strict';

const layers = [
  ['base'],
  ['io', 'log', 'yaml', 'binaries', 'home.ts', 'version.ts'],
  ['analytics', 'service', 'context'],
  ['kube'],
  ['factory.ts'], // what a command gets: built from the layers below
  ['cli'], // the command machinery (spec, parse, help); cli/run.ts wires the commands in
  ['compose'],
  ['app'], // the application in a folder: manifest or Compose, its environment name
  ['manifest'],
  ['image'],
  ['deploy'],
  ['dev', 'sync', 'doctor', 'init'],
  ['commands'],
  ['main.ts'],
];

/** A path pattern for entries of the list: a folder's files, or the file itself. */
const under = (entries) => `^src/(${entries.map((e) => e.replaceAll('.', '\\.')).join('|')})(/|$)`;

const all = layers.flat();
const below = (i) => layers.slice(0, i + 1).flat();
const above = (i) => layers.slice(i + 1).flat();

/**
 * The programs beside the CLI, each its own bundle: the CLI never imports them (its start-up and
 * package stay free of their libraries), and each reaches only the parts of src/ named here.
 */
const programs = [
  { dir: 'ingress', what: "the front door's ingress controller", may: '^src/base/', mayText: 'src/base/ only' },
  {
    dir: 'server',
    what: 'the service program',
    may: '^src/(base/|version\\.ts$)',
    mayText: 'the ground floor (base/, version.ts), never CLI code; the API contract is api/',
  },
];

const programRules = ({ dir, what, may, mayText }) => [
  { name: `cli-imports-${dir}`, comment: `the CLI (src/) never imports ${what} (${dir}/)`, severity: 'error', from: { path: '^src/' }, to: { path: `^${dir}/` } },
  { name: `${dir}-imports`, comment: `${dir}/ may import from src/ ${mayText}`, severity: 'error', from: { path: `^${dir}/` }, to: { path: '^src/', pathNot: may } },
];

module.exports = {
  forbidden: [
    ...layers.slice(0, -1).map((layer, i) => ({
      name: 'layers',
      comment: `${layer.join(', ')} may not import a higher layer (${above(i).join(', ')})`,
      severity: 'error',
      from: { path: under(layer), pathNot: under(all.filter((e) => !layer.includes(e))) },
      to: { path: under(above(i)), pathNot: under(below(i)) },
    })),
    ...layers
      .filter((layer) => layer.length > 1)
      .map((layer) => ({
        name: 'folder-loop',
        comment: `folders of one layer (${layer.join(', ')}) import each other: one direction must go`,
        severity: 'error',
        scope: 'folder',
        from: { path: under(layer) },
        to: { path: under(layer), circular: true },
      })),
    {
      name: 'module-loop',
      comment: 'modules import each other round a loop: which one initializes first depends on the entry point',
      severity: 'error',
      from: {},
      // a type-only import is erased, and a lazy import() runs after both modules have initialized
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only', 'dynamic-import'] } },
    },
    {
      name: 'unlisted',
      comment: `every folder and top-level file of src/ has a place in the layer list of .dependency-cruiser.cjs`,
      severity: 'error',
      from: { path: '^src/', pathNot: under(all) },
      to: {},
    },
    ...programs.flatMap(programRules),
    {
      name: 'api-imports',
      comment: 'the API contract (api/) stands alone: it imports nothing of the CLI, the server or the ingress controller',
      severity: 'error',
      from: { path: '^api/' },
      to: { path: '^(src|server|ingress)/' },
    },
    {
      name: 'test-code',
      comment: 'production code may not import tests or test helpers',
      severity: 'error',
      from: {},
      to: { path: ['^test/', '\\.test\\.ts$'] },
    },
  ],
  options: {
    exclude: { path: ['\\.test\\.ts$', '/testdata/'] },
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
