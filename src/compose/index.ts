/**
 * Compose support: the API the deploy, destroy, endpoints and up commands build on.
 *
 *   const project = loadCompose({ cwd, files, env: process.env, secrets });   // throws LocatedError
 *   const { objects, rollout, endpoints, warnings } = translateCompose(project, { name, namespace, endpointDomain, images });
 *
 * Loading reads files; translating is pure. Objects carry the labels of src/kube/labels.ts, so an
 * environment's objects are found with environmentSelector(name).
 */
export { defaultComposeFileNames, findComposeFiles, type FindOptions } from './find.ts';
export { loadCompose, loadComposeTexts, nodeFileAccess, type ComposeText, type LoadOptions } from './load.ts';
export type * from './model.ts';
export type { FileAccess } from './normalize/state.ts';
export { neverPublicPorts } from './translate/network.ts';
export { translateCompose, type PublicEndpoint, type RolloutStep, type TranslateOptions, type Translation } from './translate.ts';
