/**
 * The labels by which devtool finds what a deploy made, shared by the CLI (which writes them) and
 * the service (whose dashboard reads them): every object of an environment carries the environment
 * label, and an environment's record (a ConfigMap: name, status, source, updated) the state label.
 */
export const ENVIRONMENT_LABEL = 'devtool.dev/environment';
export const STATE_LABEL = 'devtool.dev/environment-state';
