/**
 * The manifest's file name: the one spelling of it. A module of its own because command specs
 * (loaded at start-up) need it, and folder.ts, which reads files with the YAML library, must only
 * load when a command runs.
 */
export const MANIFEST_FILE = 'devtool.yml';
