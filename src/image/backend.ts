/**
 * The seam between `build`'s planning (what to build, which tag, whether it is already pushed) and
 * the daemons that do the work: the local Docker daemon through the Docker Engine API
 * (docker-engine.ts) or a BuildKit daemon at BUILDKIT_HOST / the context's `tcp://` builder
 * (buildkit.ts). A backend builds one image and pushes it under every tag of the request.
 */
import type { TagLookup } from './registry.ts';

/** What to build: a context, its Dockerfile and how (shared by the plan's ImageSpec and a backend's request). */
export interface BuildInput {
  /** Absolute path of the build context folder. */
  readonly contextDir: string;
  /** Absolute path of the Dockerfile (it may lie outside the context). */
  readonly dockerfile: string;
  readonly target?: string;
  /** Build arguments, already resolved (`$VAR` expanded from the machine's environment). */
  readonly args: Readonly<Record<string, string>>;
  /** Build secrets: id -> absolute path of a local file (`RUN --mount=type=secret,id=...`). */
  readonly secrets: Readonly<Record<string, string>>;
  readonly noCache: boolean;
  /** Image references to import cache from. */
  readonly cacheFrom: readonly string[];
  /** Image references to export the build cache to (registry cache, mode=max). */
  readonly exportCache: readonly string[];
}

export interface BuildRequest extends BuildInput {
  /** Full image references (registry/repository:tag) to tag and push; at least one. */
  readonly tags: readonly string[];
  /** Labels to set on the image (devtool records its content hash there). */
  readonly labels: Readonly<Record<string, string>>;
}

export interface BuildResult {
  /** The pushed manifest's digest ("sha256:..."), when the backend reports it. */
  readonly digest?: string;
}

export interface BuildLog {
  /** One line of build output (a step, a command's output), without the newline. */
  line(text: string): void;
}

export interface BuildBackend {
  /** "docker" or "buildkit (tcp://host:port)": said in progress lines and errors. */
  readonly name: string;
  /**
   * Builds and pushes. Fails with a DevtoolError whose message is one line naming the image and the
   * cause (a failed step with its exit code, a missing Dockerfile, an unreachable daemon); the last
   * lines of the log are the caller's to show.
   */
  build(request: BuildRequest, log: BuildLog, signal?: AbortSignal): Promise<BuildResult>;
  /**
   * Is `image` in its registry, as the daemon reaches that registry (which may be where this
   * machine cannot: a node-local registry and a pipeline runner's pod)? Absent when the daemon
   * cannot be asked; never throws: a failure is `unknown` with its reason.
   */
  lookup?(image: string, signal?: AbortSignal): Promise<TagLookup>;
  /** Releases connections; idempotent. */
  close(): Promise<void>;
}
