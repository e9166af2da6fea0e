/**
 * A loaded Compose project: every field devtool acts on, validated and normalized (one shape per
 * field whatever notation the file used), variables resolved. Positions are kept where a later
 * step (deploy, wait, up) may have to point the user at the file.
 */
import type { SourcePos } from '../yaml/errors.ts';

export interface ComposeProject {
  /** The Compose files, absolute paths, in merge order. */
  readonly files: readonly string[];
  /** The project folder: the folder of the first file; relative paths resolve against it. */
  readonly projectDir: string;
  /** The top-level `name`, when the file sets one (a candidate environment name). */
  readonly name?: string;
  /** In file order. */
  readonly services: readonly ComposeService[];
  /** Declared top-level volumes, in file order. */
  readonly volumes: readonly ComposeVolume[];
  readonly endpoints: readonly Endpoint[];
  /** Things the user should know that do not stop a deploy (unset variables, ignored fields...). */
  readonly warnings: readonly string[];
}

/** `always`, `unless-stopped` and `any` restart until removal; the rest run once (docs/compose.md, Translation). */
export type RestartPolicy = 'always' | 'unless-stopped' | 'any' | 'no' | 'never' | 'none' | 'on-failure';

export type Workload = 'long-running' | 'one-off';

export interface ComposeService {
  /** The name as written in the file. */
  readonly name: string;
  /** Where the service is declared. */
  readonly pos: SourcePos;
  readonly image?: string;
  readonly build?: BuildSpec;
  /** Kubernetes `command` (Compose entrypoint): already split into words. */
  readonly entrypoint?: readonly string[];
  /** Kubernetes `args` (Compose command). */
  readonly command?: readonly string[];
  readonly workingDir?: string;
  /** The container environment: env_file then environment, variables resolved; sorted by name. */
  readonly environment: ReadonlyMap<string, string>;
  readonly ports: readonly PortMapping[];
  readonly volumes: readonly ServiceVolume[];
  readonly dependsOn: readonly Dependency[];
  readonly healthcheck?: Healthcheck;
  readonly restart: RestartPolicy;
  readonly workload: Workload;
  /** deploy.restart_policy.max_attempts (or on-failure:N): the retry limit of a one-off service. */
  readonly maxAttempts?: number;
  /** scale or deploy.replicas; 1 when neither is set. */
  readonly replicas: number;
  readonly capAdd: readonly string[];
  readonly capDrop: readonly string[];
  readonly resources: Resources;
  readonly stopGracePeriodSeconds?: number;
  /** Compose labels: annotations on the workload and its pods. */
  readonly labels: ReadonlyMap<string, string>;
}

export interface BuildSpec {
  readonly pos: SourcePos;
  /** Absolute path of the build context (or a URL, kept as written). */
  readonly context: string;
  /** Dockerfile path relative to the context. */
  readonly dockerfile: string;
  readonly target?: string;
  /** Build arguments, resolved from the local environment only (never from stored secrets). */
  readonly args: ReadonlyMap<string, string>;
  readonly cacheFrom: readonly string[];
  readonly exportCache?: string;
}

export type Protocol = 'TCP' | 'UDP' | 'SCTP';

export interface PortMapping {
  /** The container port (what other services and Kubernetes Services use). */
  readonly container: number;
  /** The host port of a HOST:CONTAINER entry: the entry asks to be public. Absent for bare ports and `expose`. */
  readonly published?: number;
  /** The host address of the entry, when set ("127.0.0.1:8080:80"). */
  readonly hostIp?: string;
  readonly protocol: Protocol;
  readonly pos: SourcePos;
}

export type ServiceVolume =
  /** NAME:PATH: a top-level volume, as a PersistentVolumeClaim. */
  | { readonly kind: 'named'; readonly volume: string; readonly target: string; readonly readOnly: boolean; readonly subPath?: string; readonly pos: SourcePos }
  /** PATH alone: storage of this service only (a claim per pod). */
  | { readonly kind: 'anonymous'; readonly target: string; readonly readOnly: boolean; readonly pos: SourcePos }
  /** HOSTPATH:PATH: not deployed; tells `up` what to synchronize. `source` is absolute. */
  | { readonly kind: 'bind'; readonly source: string; readonly target: string; readonly readOnly: boolean; readonly pos: SourcePos }
  /** tmpfs: a memory-backed emptyDir. */
  | { readonly kind: 'tmpfs'; readonly target: string; readonly pos: SourcePos };

export type DependsCondition = 'service_started' | 'service_healthy' | 'service_completed_successfully';

export interface Dependency {
  readonly service: string;
  readonly condition: DependsCondition;
  /** `required: false`: a dependency that may be missing or fail without failing the deploy. */
  readonly required: boolean;
  readonly pos: SourcePos;
}

export interface Healthcheck {
  readonly pos: SourcePos;
  readonly test: { readonly kind: 'exec'; readonly command: readonly string[] } | { readonly kind: 'http'; readonly path: string; readonly port: number };
  readonly intervalSeconds?: number;
  readonly timeoutSeconds?: number;
  readonly startPeriodSeconds?: number;
  readonly retries?: number;
}

/** Kubernetes quantities ("500m", "256Mi"). */
export interface ResourceAmounts {
  readonly cpu?: string;
  readonly memory?: string;
}

export interface Resources {
  readonly requests: ResourceAmounts;
  readonly limits: ResourceAmounts;
}

export interface ComposeVolume {
  /** The key in the top-level `volumes` map. */
  readonly name: string;
  readonly pos: SourcePos;
  /** The claim's name: `name:` when set, else the key. */
  readonly claimName: string;
  /** `external: true`: the claim exists already; devtool neither creates nor deletes it. */
  readonly external: boolean;
  /** driver_opts.size, default 1Gi. */
  readonly size: string;
  /** driver_opts.class: the storage class. */
  readonly storageClass?: string;
  readonly labels: ReadonlyMap<string, string>;
}

export interface EndpointRule {
  readonly path: string;
  readonly service: string;
  readonly port: number;
  readonly pos: SourcePos;
}

export interface Endpoint {
  /** The map key (map notation); absent in the list and object notations: the environment's name. */
  readonly name?: string;
  readonly labels: ReadonlyMap<string, string>;
  readonly rules: readonly EndpointRule[];
  readonly pos: SourcePos;
}
