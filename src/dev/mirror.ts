/**
 * The objects of dev mode, built from the original Deployment (or StatefulSet) without touching the cluster: the
 * mirror Deployment `<name>-devtool`, the claim that keeps synced folders and agent state across
 * pod restarts, and the Secret holding the agent's configuration (agent/README.md).
 *
 * The mirror is a deep copy of the original's spec, so it inherits the service account, env,
 * envFrom, volumes, sidecars and pod labels (existing Services route to it); only the dev
 * container is changed. Pure: the same input always gives the same objects (golden tests).
 */
import type { V1Capabilities, V1Container, V1EnvVar, V1ObjectMeta, V1Probe, V1ResourceRequirements, V1Secret, V1VolumeMount } from '@kubernetes/client-node';
import { DevtoolError } from '../base/errors.ts';
import { environmentLabels, MANAGED_BY, MANAGED_BY_LABEL } from '../kube/labels.ts';
import { NO_LIMITS, ownContainerResources, type NamespaceLimits } from '../kube/namespace-limits.ts';
import type { DeploymentObject, PersistentVolumeClaimObject } from '../kube/objects.ts';
import {
  DEV_LABEL,
  DEV_POD_LABEL,
  DEV_VERSION_ANNOTATION,
  FOLDER_ANNOTATION,
  ORIGINAL_ANNOTATION,
  SPEC_HASH_ANNOTATION,
  mirrorName,
  stableJson,
} from './names.ts';
import { sha256 } from '../base/hash.ts';
import type { DevService } from '../manifest/model.ts';
import { kindWord, mirrorSourceSpec, type OriginalObject } from './statefulset.ts';

export type SecretObject = V1Secret & { apiVersion: 'v1'; kind: 'Secret'; metadata: V1ObjectMeta & { name: string } };

export interface MirrorInput {
  /** A Deployment or a StatefulSet (statefulset.ts: what of it the mirror takes). */
  original: OriginalObject;
  /** The `services` key. */
  devName: string;
  dev: DevService;
  /**
   * The environment `deploy` in the same folder makes (app/name.ts): the claim carries its label,
   * so `destroy` of the application keeps it, and deletes it with --volumes.
   */
  environment: string;
  /** --env values; they win over the manifest's environment. */
  extraEnv: Record<string, string>;
  /**
   * The devtool-bin image the init container copies the agent from, e.g.
   * localhost:5000/devtool-bin:0.1.0; undefined: there is none the cluster can pull, and the dev
   * container waits for the CLI to copy the agent in through the Kubernetes API (agent-inject.ts).
   */
  agentImage: string | undefined;
  /** folderHash() of the folder `up` runs from. */
  folder: string;
  /** This CLI's version: recorded on the dev Deployment and part of its spec hash (dev-version.ts). */
  devtoolVersion: string;
  /** The agent's SSH host key (private) and the CLI's client public key. */
  hostPrivateKey: string;
  clientPublicKey: string;
  /** The agent configuration's `syncthing` section (src/sync/syncthing-config.ts); absent: no folders to sync. */
  syncthing?: Record<string, unknown>;
  /**
   * The claim already holds this agent build (agentKeptDir, where an earlier dev pod's agent copied
   * itself): the dev pod starts without the init container. Ignored without a claim.
   */
  agentOnClaim?: boolean;
  /**
   * The namespace's quotas and limit ranges (kube/namespace-limits.ts): the agent's installer gets
   * the requests and limits they demand. Absent: none.
   */
  namespaceLimits?: NamespaceLimits;
  /**
   * A dev pod's agent could not write its state folder on the claim (its storage ignores fsGroup and
   * its folders are not the dev container's user's: unwritable-claim.ts): the dev container keeps its
   * state and synced folders in an emptyDir instead, as with `persistentVolume.enabled: false`, and
   * the claim is left as it is.
   */
  claimUnwritable?: boolean;
}

export interface DevObjects {
  deployment: DeploymentObject;
  /** Absent when the manifest turns the persistent volume off, or the claim is not writable (claimUnwritable). */
  claim?: PersistentVolumeClaimObject;
  secret: SecretObject;
}

/** Where things live in the dev container (agent/README.md, "How the CLI uses it"). */
export const AGENT_BIN_DIR = '/devtool/bin';
export const AGENT_CONFIG_DIR = '/etc/devtool';
export const AGENT_CONFIG_FILE = 'agent.json';
export const AGENT_STATE_DIR = '/var/devtool';
export const AGENT_SSH_PORT = 2222;
/** The agent in the dev container (copied there by the init container). */
export const AGENT_PATH = `${AGENT_BIN_DIR}/devtool-agent`;

/** The dev container of a dev pod: the one the agent runs as PID 1 (sidecars are the original's). */
export function devContainerName(pod: { spec?: { containers: { name: string; command?: string[] }[] } }): string {
  const containers = pod.spec?.containers ?? [];
  return containers.find((c) => runsAgent(c))?.name ?? containers[0]?.name ?? '';
}

/** The container's command starts the agent, at once or once the CLI has copied it in (waitingForAgent). */
function runsAgent(c: { command?: string[] }): boolean {
  return c.command?.[0] === AGENT_PATH || waitsForCopiedAgent(c);
}

/**
 * The dev container's shell, while it waits for the agent (agent-inject.ts): `$0` is the agent's
 * path, which the CLI renames into place only once the file is whole and checked; then the shell
 * becomes the agent (`exec`, so the agent is PID 1 as with the init container).
 */
const WAIT_FOR_AGENT_SCRIPT = 'until [ -x "$0" ]; do sleep 0.2 2>/dev/null || sleep 1 || exit 127; done; exec "$0" "$@"';
export const AGENT_SHELL = '/bin/sh';

/** The command of a dev container that waits for the agent to be copied in, then runs `agentCommand`. */
export function waitingForAgent(agentCommand: string[]): string[] {
  return [AGENT_SHELL, '-c', WAIT_FOR_AGENT_SCRIPT, ...agentCommand];
}

/** The container runs waitingForAgent's command. */
export function waitsForCopiedAgent(c: { command?: string[] }): boolean {
  return c.command?.[0] === AGENT_SHELL && c.command[2] === WAIT_FOR_AGENT_SCRIPT && c.command[3] === AGENT_PATH;
}

/** Makes the claim's subPath directories writable by any UID (kubelet chowns volume roots to it). */
export const DEFAULT_FS_GROUP = 4242;

/** The devtool-bin image's user (agent/build.sh IMAGE_USER). */
const AGENT_IMAGE_UID = 65532;

const BIN_VOLUME = 'devtool-bin';
/** The init container that copies the agent from the devtool-bin image. */
export const INSTALLER_NAME = 'devtool-bin';
const CONFIG_VOLUME = 'devtool-config';
/** The dev pod's volume for synced folders and agent state: the claim, or an emptyDir. */
export const DATA_VOLUME = 'devtool-data';

export function buildDevObjects(input: MirrorInput): DevObjects {
  const { original, dev, devName } = input;
  const name = mirrorName(original.metadata.name);
  const labels = { [DEV_LABEL]: devName, [MANAGED_BY_LABEL]: MANAGED_BY };
  const agentConfig = agentContract(input.hostPrivateKey, input.clientPublicKey, input.syncthing);
  const onClaim = dev.persistentVolume.enabled && input.claimUnwritable !== true;
  // Everything that shapes the dev pod: a change rolls it (the annotation is on the template too).
  const agentOnClaim = input.agentOnClaim === true && onClaim && input.agentImage !== undefined;
  const installerResources = agentInstallerResources(input.namespaceLimits ?? NO_LIMITS);
  const specHash = sha256(
    stableJson({
      dev,
      extraEnv: input.extraEnv,
      // Another version's `up` rolls the pod: it runs the agent of the version that made it.
      devtoolVersion: input.devtoolVersion,
      image: input.agentImage ?? AGENT_COPIED_IN,
      agentConfig,
      template: original.spec?.template,
      ...(agentOnClaim ? { agentOnClaim } : {}),
      // Only when a namespace asks for other values: the hash of every other dev pod stays as it was.
      ...(stableJson(installerResources) !== stableJson(INSTALLER_RESOURCES) ? { installerResources } : {}),
      ...(dev.persistentVolume.enabled && !onClaim ? { claimUnwritable: true } : {}),
    }),
  ).slice(0, 16);

  const secret: SecretObject = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, labels },
    type: 'Opaque',
    data: { [AGENT_CONFIG_FILE]: Buffer.from(agentConfig).toString('base64') },
  };

  const claim: PersistentVolumeClaimObject | undefined = !onClaim
    ? undefined
    : {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        // Only the claim: a Deployment or Secret with the environment's label would be awaited, pruned
        // or destroyed with the application's own objects while the dev container runs.
        metadata: { name, labels: { ...labels, ...environmentLabels(input.environment) } },
        spec: {
          accessModes: ['ReadWriteOnce'],
          resources: { requests: { storage: dev.persistentVolume.size } },
          ...(dev.persistentVolume.storageClass ? { storageClassName: dev.persistentVolume.storageClass } : {}),
        },
      };

  const spec = mirrorSourceSpec(original);
  if (!spec?.template.spec) throw new DevtoolError(`${kindWord(original.kind)} ${original.metadata.name} has no pod template`);
  const pod = spec.template.spec;
  const index = devContainerIndex(pod.containers, dev.container, `${kindWord(original.kind)} ${original.metadata.name}`);
  // With a claim, the agent copies itself onto it (into its state folder, which its user can
  // write), and the next dev pod of the same agent build runs it from there, without the init
  // container: that saves the kubelet a round of about a second (agent-cache.ts).
  // An agent copied in through the API is not kept: the next dev pod's is copied again.
  const image = input.agentImage;
  const keptDir = image === undefined ? undefined : agentKeptDir(image);
  const agent: AgentPlacement =
    agentOnClaim && keptDir
      ? { mount: { name: DATA_VOLUME, subPath: `state/${keptDir}`, readOnly: true } }
      : { mount: { name: BIN_VOLUME }, keepIn: claim && keptDir ? `${AGENT_STATE_DIR}/${keptDir}` : undefined, copiedIn: image === undefined };
  pod.containers[index] = devContainer(pod.containers[index]!, input, agent);

  if (!agentOnClaim && image !== undefined)
    pod.initContainers = [agentInstaller(image, pod.securityContext?.runAsUser === 0, installerResources), ...(pod.initContainers ?? [])];
  pod.volumes = [
    ...(pod.volumes ?? []).filter((v) => ![BIN_VOLUME, CONFIG_VOLUME, DATA_VOLUME].includes(v.name)),
    ...(agentOnClaim ? [] : [{ name: BIN_VOLUME, emptyDir: {} }]),
    // 0440 + fsGroup: readable by whatever UID the image runs as, by no one else.
    { name: CONFIG_VOLUME, secret: { secretName: name, defaultMode: 0o440 } },
    // Without a persistent volume (the manifest opted out, or its claim is unwritable) the state lasts as long as the pod.
    claim ? { name: DATA_VOLUME, persistentVolumeClaim: { claimName: name } } : { name: DATA_VOLUME, emptyDir: {} },
  ];
  // The agent's state and the synced folders must be writable by a non-root UID (agent/README.md).
  // OnRootMismatch: a big synced tree is not chowned again on every restart.
  pod.securityContext = { fsGroup: DEFAULT_FS_GROUP, fsGroupChangePolicy: 'OnRootMismatch', ...pod.securityContext };
  if (dev.securityContext?.fsGroup !== undefined) pod.securityContext.fsGroup = dev.securityContext.fsGroup;
  // The agent stops everything within a second or two of SIGTERM; don't keep `down` waiting.
  pod.terminationGracePeriodSeconds = Math.min(pod.terminationGracePeriodSeconds ?? 5, 5);

  const podLabels = { ...spec.template.metadata?.labels, [DEV_POD_LABEL]: devName };
  spec.template.metadata = {
    ...spec.template.metadata,
    labels: podLabels,
    annotations: { ...spec.template.metadata?.annotations, [SPEC_HASH_ANNOTATION]: specHash },
  };
  // Same selector plus the dev label: existing Services (which select on pod labels) reach the dev
  // pod, while the original's and the mirror's pods stay apart for the two controllers.
  spec.selector = { ...spec.selector, matchLabels: { ...spec.selector.matchLabels, [DEV_POD_LABEL]: devName } };
  spec.replicas = 1;
  // One pod at a time: two dev pods would share the ReadWriteOnce claim and both sync.
  spec.strategy = { type: 'Recreate' };
  spec.revisionHistoryLimit = 2;
  delete spec.paused;

  const deployment: DeploymentObject = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name,
      labels: { ...original.metadata.labels, ...labels },
      annotations: {
        [ORIGINAL_ANNOTATION]: original.metadata.name,
        [FOLDER_ANNOTATION]: input.folder,
        [SPEC_HASH_ANNOTATION]: specHash,
        [DEV_VERSION_ANNOTATION]: input.devtoolVersion,
      },
    },
    spec,
  };
  return { deployment, claim, secret };
}

/** The agent configuration (agent/README.md). Without folders to sync, Syncthing stays off (`supervise --no-syncthing`). */
export function agentContract(hostPrivateKey: string, clientPublicKey: string, syncthing?: Record<string, unknown>): string {
  const ssh = { listenAddress: `127.0.0.1:${AGENT_SSH_PORT}`, hostKey: hostPrivateKey, authorizedKeys: [clientPublicKey] };
  return JSON.stringify({ version: 1, ssh, ...(syncthing ? { syncthing } : {}) }, null, 2);
}

function devContainerIndex(containers: V1Container[], wanted: string | undefined, workload: string): number {
  if (wanted === undefined) return 0;
  const i = containers.findIndex((c) => c.name === wanted);
  if (i < 0)
    throw new DevtoolError(`${workload} has no container "${wanted}" (it has ${containers.map((c) => c.name).join(', ')}); fix "container" in the manifest`);
  return i;
}

/** `rootPod`: the original runs its pod as uid 0, which the installer's runAsNonRoot would refuse: it gets the image's user. */
function agentInstaller(image: string, rootPod: boolean, resources: V1ResourceRequirements): V1Container {
  return {
    name: INSTALLER_NAME,
    image,
    imagePullPolicy: 'IfNotPresent',
    command: ['/devtool-bin/devtool-agent', 'install', AGENT_BIN_DIR],
    // Pod Security "restricted" as it is (the image's user is 65532): it writes only to its volume.
    securityContext: {
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      runAsNonRoot: true,
      ...(rootPod ? { runAsUser: AGENT_IMAGE_UID } : {}),
      readOnlyRootFilesystem: true,
      seccompProfile: { type: 'RuntimeDefault' },
    },
    resources,
    volumeMounts: [{ name: BIN_VOLUME, mountPath: AGENT_BIN_DIR }],
  };
}

/**
 * The installer's requests and limits: small fixed values (it copies one file, in well under a
 * second), no CPU limit unless a quota demands one (a limit would only slow the copy), and each
 * value moved into the namespace's LimitRange bounds (docs/decisions/0214-quota-demands-and-devtool-containers.md).
 */
const INSTALLER_RESOURCES: V1ResourceRequirements = { requests: { cpu: '10m', memory: '16Mi' }, limits: { memory: '64Mi' } };
const INSTALLER_WHEN_DEMANDED: V1ResourceRequirements = { limits: { cpu: '100m' } };

export function agentInstallerResources(limits: NamespaceLimits): V1ResourceRequirements {
  return ownContainerResources(INSTALLER_RESOURCES, INSTALLER_WHEN_DEMANDED, limits);
}

/** Where in the agent's state folder (on the claim) an agent build is kept: one folder per devtool-bin image. */
export function agentKeptDir(agentImage: string): string {
  return `agent-${sha256(agentImage).slice(0, 12)}`;
}

/** The dev Deployment starts its pods with the init container that copies the agent. */
export function copiesAgent(deployment: { spec?: { template?: { spec?: { initContainers?: { name: string }[] } } } }): boolean {
  return (deployment.spec?.template?.spec?.initContainers ?? []).some((c) => c.name === INSTALLER_NAME);
}

/**
 * Where the dev container finds the agent (`mount`, at AGENT_BIN_DIR), where it keeps a copy for the
 * next dev pod, and whether the CLI copies it in (the container waits for it).
 */
interface AgentPlacement {
  mount: { name: string; subPath?: string; readOnly?: boolean };
  keepIn?: string;
  copiedIn?: boolean;
}

/** In the spec hash in place of an image: the agent is copied in through the API. */
const AGENT_COPIED_IN = 'copied in through the Kubernetes API';

/**
 * Not started (so not ready) until the agent is there: every tool that waits for a ready dev pod
 * waits for the agent. A startup probe stops once it succeeds; the container is restarted only
 * after a day without an agent.
 */
const AGENT_STARTUP_PROBE: V1Probe = { exec: { command: [AGENT_PATH, 'version'] }, periodSeconds: 1, timeoutSeconds: 5, failureThreshold: 86_400 };

function devContainer(c: V1Container, input: MirrorInput, agent: AgentPlacement): V1Container {
  const { dev } = input;
  const out: V1Container = { ...c };
  if (dev.image) out.image = dev.image;
  // The manifest's default working directory is the first synced folder.
  const workdir = dev.workdir ?? dev.sync[0]?.remote;
  if (workdir) out.workingDir = workdir;
  if (Object.keys(dev.resources.requests).length > 0 || Object.keys(dev.resources.limits).length > 0) {
    out.resources = {
      ...(Object.keys(dev.resources.requests).length ? { requests: { ...dev.resources.requests } } : {}),
      ...(Object.keys(dev.resources.limits).length ? { limits: { ...dev.resources.limits } } : {}),
    };
  }
  const sc = dev.securityContext;
  if (sc) {
    const { fsGroup: _podLevel, capabilities, ...rest } = sc;
    out.securityContext = {
      ...out.securityContext,
      ...rest,
      // A list the manifest gives replaces the original's; one it leaves out is kept: adding
      // NET_BIND_SERVICE must not lose the original's `drop: [ALL]` (Pod Security "restricted" needs it).
      ...(capabilities ? { capabilities: mergedCapabilities(out.securityContext?.capabilities, capabilities) } : {}),
    };
  }
  // The agent is PID 1: it runs SSH and Syncthing and keeps the container up. The
  // manifest's command is what `up` runs in its terminal session, not here, so it does not run twice.
  const supervise = [AGENT_PATH, 'supervise', ...(input.syncthing ? [] : ['--no-syncthing'])];
  out.command = agent.copiedIn ? waitingForAgent(supervise) : supervise;
  delete out.args;
  // The app's probes would kill or unready a container that runs a shell instead of the app.
  delete out.livenessProbe;
  delete out.readinessProbe;
  delete out.startupProbe;
  if (agent.copiedIn) out.startupProbe = AGENT_STARTUP_PROBE;

  const devtoolEnv: Record<string, string> = {
    DEVTOOL_AGENT_CONFIG: `${AGENT_CONFIG_DIR}/${AGENT_CONFIG_FILE}`,
    DEVTOOL_STATE: AGENT_STATE_DIR,
    // An environment variable, not a flag: an older agent (a tag the node cached) ignores it.
    ...(agent.keepIn ? { DEVTOOL_KEEP_BINARIES: agent.keepIn } : {}),
  };
  const overrides: Record<string, string> = { ...dev.environment, ...input.extraEnv, ...devtoolEnv };
  const env: V1EnvVar[] = (c.env ?? []).filter((e) => !(e.name in overrides));
  for (const [name, value] of Object.entries(overrides)) env.push({ name, value });
  out.env = env;

  const mounts: V1VolumeMount[] = [
    { ...agent.mount, mountPath: AGENT_BIN_DIR },
    { name: CONFIG_VOLUME, mountPath: AGENT_CONFIG_DIR, readOnly: true },
    { name: DATA_VOLUME, mountPath: AGENT_STATE_DIR, subPath: 'state' },
    // Each synced folder on its own subPath: a workingDir created inside a volume by the runtime
    // would be root-owned and unwritable for a non-root agent (agent/README.md).
    ...dev.sync.map((s) => ({ name: DATA_VOLUME, mountPath: s.remote, subPath: syncSubPath(s.remote) })),
  ];
  const taken = new Set(mounts.map((m) => m.mountPath));
  out.volumeMounts = [...(c.volumeMounts ?? []).filter((m) => !taken.has(m.mountPath)), ...mounts];
  return out;
}

function mergedCapabilities(original: V1Capabilities | undefined, dev: { add: string[]; drop: string[] }): V1Capabilities {
  const add = dev.add.length ? dev.add : (original?.add ?? []);
  const drop = dev.drop.length ? dev.drop : (original?.drop ?? []);
  return { ...(add.length ? { add: [...add] } : {}), ...(drop.length ? { drop: [...drop] } : {}) };
}

/** A flat subPath per remote folder: "/app" -> "sync_app", "/" -> "sync_". */
export function syncSubPath(remote: string): string {
  return `sync${remote.replace(/\/+$/, '').replace(/[^A-Za-z0-9._-]/g, '_') || '_'}`;
}
