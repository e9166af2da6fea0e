/**
 * The manifest (devtool.yml) as the rest of devtool sees it: every shorthand normalized (a command
 * given as a string, a list of dependency URLs, `KEY=VALUE` lists) and every default filled in, so
 * consumers never look at raw YAML. docs/manifest.md is the user-facing reference of these fields.
 */

/** Used when a dependency does not say how long `wait` may take: `deploy --timeout`'s default. */
export const DEFAULT_DEPENDENCY_TIMEOUT_MS = 5 * 60_000;
/** Okteto's own default, which is what users of dev containers expect. */
export const DEFAULT_DEV_COMMAND = ['sh'];
export const DEFAULT_VOLUME_SIZE = '5Gi';

export interface Manifest {
  /** Absolute path of the file. */
  readonly file: string;
  /** Folder of the file: deploy commands run here, and relative paths start here. */
  readonly folder: string;
  /** The text as written (recorded in the environment's state). */
  readonly text: string;
  /** The environment name; `--name` overrides it, the repository or folder name is the fallback. */
  readonly name?: string;
  readonly build: Record<string, BuildImage>;
  readonly deploy: DeploySection;
  readonly dependencies: Record<string, Dependency>;
  readonly destroy: Command[];
  readonly services: Record<string, DevService>;
  /** Variables referenced while unset (expanded to ""), and similar non-fatal notes. */
  readonly warnings: string[];
}

export interface BuildImage {
  /** Build context, relative to the manifest's folder. Default ".". */
  readonly context: string;
  /** Dockerfile, relative to the context. Default "Dockerfile". */
  readonly dockerfile: string;
  readonly target?: string;
  /** Build arguments, in the order written. */
  readonly args: Record<string, string>;
  /** Build secrets: id -> local file path (relative to the manifest's folder). */
  readonly secrets: Record<string, string>;
  readonly cacheFrom: string[];
  readonly exportCache: string[];
  /** The image reference to push; when absent, `build` chooses one in the context's registry. */
  readonly image?: string;
  /** Other images of this section to build first. */
  readonly dependsOn: string[];
}

export interface Command {
  /** Shown in progress lines and prefixed to the command's output. Default: the command itself. */
  readonly name: string;
  /** Run with `sh -c`, from the manifest's folder. Not expanded by devtool: its shell does that. */
  readonly command: string;
}

export interface DeploySection {
  readonly commands: Command[];
  /** Compose files deployed after the commands, relative to the manifest's folder. */
  readonly compose?: ComposeReference;
}

export interface ComposeReference {
  readonly files: string[];
  /** Extra `endpoints`, as the Compose extension writes them (list, map of lists, or {labels, rules}). */
  readonly endpoints?: unknown;
}

export interface Dependency {
  /** Git URL or local path of the repository. */
  readonly repository: string;
  /** Manifest path inside the repository. Default: devtool.yml, or its Compose files. */
  readonly manifest?: string;
  /** Default: the repository's default branch. */
  readonly branch?: string;
  /** Passed to the dependency's deploy as --var. */
  readonly variables: Record<string, string>;
  /** Wait until the dependency's workloads are ready. Default false. */
  readonly wait: boolean;
  readonly timeoutMs: number;
}

export interface DevService {
  /** Image of the dev container; default: the original container's image. */
  readonly image?: string;
  readonly command: string[];
  readonly workdir?: string;
  readonly sync: SyncFolder[];
  /** Sync folders may lie outside the project (project-scope.ts). Default false. */
  readonly syncOutsideProject: boolean;
  /**
   * The dev container may write `.git`, execute bits and links out of the folder here, as sync
   * did before (container-guard.ts). Default false.
   */
  readonly trustContainer: boolean;
  readonly forward: Forward[];
  readonly reverse: Reverse[];
  readonly environment: Record<string, string>;
  readonly resources: Resources;
  /** Labels selecting the Deployment or StatefulSet to replace; default: the one named like the service. */
  readonly selector: Record<string, string>;
  /** Container to replace in a multi-container pod; default the first. */
  readonly container?: string;
  readonly persistentVolume: PersistentVolume;
  readonly securityContext?: SecurityContext;
  /** Create a Deployment when none matches, instead of failing. Default false. */
  readonly autocreate: boolean;
}

/** `two-way` (`rw`): both ways. `send-only` (`ro`): to the container only; its changes stay there. */
export type SyncMode = 'two-way' | 'send-only';

export interface SyncFolder {
  /** Relative to the manifest's folder (or absolute). */
  readonly local: string;
  readonly remote: string;
  readonly mode: SyncMode;
}

export interface Forward {
  readonly local: number;
  readonly remote: number;
  /** Forward to another service of the namespace instead of the dev container. */
  readonly service?: string;
}

export interface Reverse {
  readonly remote: number;
  readonly local: number;
}

export interface Resources {
  readonly requests: Record<string, string>;
  readonly limits: Record<string, string>;
}

export interface PersistentVolume {
  readonly enabled: boolean;
  readonly size: string;
  readonly storageClass?: string;
}

export interface SecurityContext {
  readonly runAsUser?: number;
  readonly runAsGroup?: number;
  readonly fsGroup?: number;
  readonly runAsNonRoot?: boolean;
  readonly allowPrivilegeEscalation?: boolean;
  readonly capabilities?: { readonly add: string[]; readonly drop: string[] };
}

/** Environment variable names `build` exports for an image of the `build` section (Okteto's OKTETO_BUILD_<NAME>_IMAGE). */
export function buildImageVariable(imageName: string): string {
  return `DEVTOOL_BUILD_${imageName.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_IMAGE`;
}
