/**
 * The Job of a pipeline run, as a pure function of what was asked (golden fixtures in testdata/).
 * The runner (the image of scripts/runner-image.sh: devtool, git, kubectl, helm) clones the
 * repository over HTTPS and runs `devtool deploy` or `devtool destroy` in it, as the user who asked:
 * its Kubernetes credentials are a token of the user's own ServiceAccount, mounted from the run's
 * Secret (runSecret) with the git token, the front door's CA and the `--var` values. Nothing
 * secret is in this spec: the branch and file reach the script as arguments and environment
 * variables, never spliced into its text; the `--var` values and the git token are read from the
 * mounted files (the token by a credential helper).
 */
import type * as k8s from '@kubernetes/client-node';

export const LABEL_PIPELINE = 'devtool.dev/pipeline';
export const LABEL_RUN = 'devtool.dev/pipeline-run';
/** Where the run's Secret is mounted in the runner. */
export const CREDENTIALS_DIR = '/var/run/devtool';
/** Keys of the run's Secret. */
export const KEY_KUBE_TOKEN = 'kube-token';
export const KEY_CLUSTER_CA = 'cluster-ca.crt';
export const KEY_FRONT_DOOR_CA = 'front-door-ca.crt';
export const KEY_GIT_TOKEN = 'git-token';
/** A short-lived API token of the user: devtool in the runner acts on the service context with it (hosted builds). */
export const KEY_API_TOKEN = 'api-token';
/**
 * The `--var` values, one key each (`var-000`, `var-001`... in the order given: a later one wins),
 * so a value, which may be a password, is in no Job spec and no log line.
 */
export const variableKey = (index: number) => `var-${String(index).padStart(3, '0')}`;
/** The runner prints this line once it has cloned: the service reads the commit from it. */
export const COMMIT_LINE_PREFIX = 'devtool pipeline: commit ';

export interface RunnerJobInput {
  action: 'deploy' | 'destroy';
  /** The pipeline's name: the environment name `devtool deploy` gets. */
  name: string;
  namespace: string;
  /** Unique per run: names the Job and its Secrets. */
  runId: string;
  image: string;
  repository: string;
  branch?: string;
  file?: string;
  /** NAME=VALUE (deploy). */
  variables: string[];
  /** destroy --volumes */
  volumes: boolean;
  timeoutSeconds: number;
  labels: Record<string, string>;
  /** The domain of public endpoints (the service's): Compose endpoints get their URLs under it. */
  endpointDomain?: string;
  /** The IngressClass the service's endpoints name (DEVTOOL_INGRESS_CLASS): Compose endpoints' Ingresses name it. */
  ingressClass?: string;
  /** The service's URL: devtool in the runner uses it as its context, with the run's API token. */
  serviceUrl?: string;
}

/**
 * `devtool-run-<name>-<run>`: at most 59 characters with a 40-character name (PipelineName), as
 * Kubernetes wants of a Job's name (its pods carry it as the job-name label: 63 at most).
 */
export const jobName = (name: string, runId: string) => `devtool-run-${name}-${runId}`;
/** The run's credentials (kube token, git token, CAs), mounted as files. */
export const credentialsSecretName = jobName;
/** The user's stored secrets, as the runner's environment (deploy's `${NAME}`). */
export const envSecretName = (name: string, runId: string) => `${jobName(name, runId)}-env`;

/**
 * The --var values from the run's Secret, after the line showing the command: the log names how
 * many, never a value. deploy gets them as --var arguments; destroy has no --var, but loads the
 * manifest with its environment, so they are exported (`export "$(cat f)"` assigns NAME=VALUE
 * whole, spaces, quotes and `$` included). `$1` is the action; `$d` the mounted Secret.
 */
export const LOAD_VARIABLES = `n=0
for f in "$d"/var-*; do
  [ -f "$f" ] || continue
  if [ "$1" = destroy ]; then export "$(cat "$f")"; else set -- "$@" --var "$(cat "$f")"; fi
  n=$((n + 1))
done
if [ "$n" -gt 0 ]; then
  if [ "$1" = destroy ]; then echo "devtool pipeline: with $n variable(s) of the deploy from the run's Secret"
  else echo "devtool pipeline: with $n --var value(s) from the run's Secret"; fi
fi
`;

/** The runner's script. `$@` is devtool's command line; REPOSITORY and BRANCH come from the environment. */
export const RUNNER_SCRIPT = `set -eu
d=${CREDENTIALS_DIR}
mkdir -p "$HOME"
# Git trusts the system's CAs and the front door's (a repository served through it).
cat /etc/ssl/certs/ca-certificates.crt > /tmp/cas.pem
if [ -s "$d/${KEY_FRONT_DOOR_CA}" ]; then
  cat "$d/${KEY_FRONT_DOOR_CA}" >> /tmp/cas.pem
  export NODE_EXTRA_CA_CERTS="$d/${KEY_FRONT_DOOR_CA}" DEVTOOL_CA_CERT="$d/${KEY_FRONT_DOOR_CA}"
fi
export GIT_SSL_CAINFO=/tmp/cas.pem
# The user's own credentials, for the API server from inside the cluster. With the service's URL and
# the run's API token, devtool works on the service context, logged in as a user does (context use
# reads what the service announces: its registry, endpoint domain, CA): its hosted builder builds the
# images, and every Kubernetes request (devtool's, and kubectl's and helm's through the credential
# plugin) carries a short-lived token the service hands out, bound to the run's API token. Without
# them, the token mounted from the run's Secret.
if [ -n "\${SERVICE_URL:-}" ] && [ -s "$d/${KEY_API_TOKEN}" ]; then
  devtool context use "$SERVICE_URL" --token "$(cat "$d/${KEY_API_TOKEN}")" >/dev/null
  user="{exec: {apiVersion: client.authentication.k8s.io/v1, command: devtool, args: [kubetoken, --context, '$SERVICE_URL'], interactiveMode: Never}}"
else
  user="{token: '$(cat "$d/${KEY_KUBE_TOKEN}")'}"
fi
cat > "$KUBECONFIG" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: cluster, cluster: {server: "https://kubernetes.default.svc", certificate-authority: "$d/${KEY_CLUSTER_CA}"}}]
users: [{name: user, user: $user}]
contexts: [{name: pipeline, context: {cluster: cluster, user: user, namespace: "$NAMESPACE"}}]
current-context: pipeline
EOF
# A private repository: the token from the mounted file, through a credential helper (never in a URL,
# an argument or the log).
if [ -s "$d/${KEY_GIT_TOKEN}" ]; then
  git config --global credential.helper '!f() { test "$1" = get && echo username=devtool && echo "password=$(cat ${CREDENTIALS_DIR}/${KEY_GIT_TOKEN})"; }; f'
fi
echo "devtool pipeline: cloning $REPOSITORY\${BRANCH:+ (branch $BRANCH)}"
if [ -n "\${BRANCH:-}" ]; then cloned() { git clone --quiet --depth 1 --branch "$BRANCH" -- "$REPOSITORY" /work/src; }
else cloned() { git clone --quiet --depth 1 -- "$REPOSITORY" /work/src; }; fi
if ! cloned; then
  # A destroy still runs when its branch is gone (a merged pull request's), or the repository:
  # with the default branch's manifest, else without one (its destroy commands cannot run then).
  [ "$1" = destroy ] || exit 1
  rm -fr /work/src
  if [ -n "\${BRANCH:-}" ] && git clone --quiet --depth 1 -- "$REPOSITORY" /work/src; then
    echo "devtool pipeline: branch $BRANCH cannot be cloned: destroying with the default branch's manifest"
  else
    echo "devtool pipeline: the repository cannot be cloned: destroying without its manifest (no destroy commands run)"
    mkdir -p /work/src && git init --quiet /work/src
  fi
fi
cd /work/src
# destroy --file: the file deploy was given, when this checkout has it.
if [ -n "\${DESTROY_FILE:-}" ]; then
  if [ -f "$DESTROY_FILE" ]; then set -- "$@" --file "$DESTROY_FILE"
  else echo "devtool pipeline: $DESTROY_FILE is not in this checkout: destroying without it"; fi
fi
echo "${COMMIT_LINE_PREFIX}$(git rev-parse HEAD) (branch $(git rev-parse --abbrev-ref HEAD))"
echo "devtool pipeline: devtool $*"
${LOAD_VARIABLES}exec devtool "$@"
`;

/** devtool's command line in the runner. */
export function runnerArgs(input: RunnerJobInput): string[] {
  const args = [input.action, '--name', input.name, '--namespace', input.namespace];
  // destroy reads the manifest deploy was given (DESTROY_FILE: the script passes it when the checkout has it).
  if (input.file && input.action === 'deploy') args.push('--file', input.file);
  // deploy's --var values follow from the run's Secret (variableKey): none in the spec.
  if (input.action === 'destroy' && input.volumes) args.push('--volumes');
  args.push('--wait', '--timeout', `${input.timeoutSeconds}s`);
  return args;
}

export function runnerJob(input: RunnerJobInput): k8s.V1Job {
  const name = jobName(input.name, input.runId);
  const labels = { ...input.labels, [LABEL_PIPELINE]: input.name, [LABEL_RUN]: input.runId };
  const env: k8s.V1EnvVar[] = [
    { name: 'REPOSITORY', value: input.repository },
    ...(input.branch ? [{ name: 'BRANCH', value: input.branch }] : []),
    ...(input.action === 'destroy' && input.file ? [{ name: 'DESTROY_FILE', value: input.file }] : []),
    { name: 'NAMESPACE', value: input.namespace },
    { name: 'KUBECONFIG', value: '/tmp/kubeconfig' },
    { name: 'HOME', value: '/tmp/home' },
    { name: 'DEVTOOL_HOME', value: '/tmp/devtool' },
    // HTTPS only: git refuses ssh://, git:// and file:// (also in submodules), and never prompts.
    { name: 'GIT_ALLOW_PROTOCOL', value: 'https' },
    { name: 'GIT_TERMINAL_PROMPT', value: '0' },
    { name: 'CI', value: 'true' },
    ...(input.endpointDomain ? [{ name: 'DEVTOOL_ENDPOINT_DOMAIN', value: input.endpointDomain }] : []),
    ...(input.ingressClass ? [{ name: 'DEVTOOL_INGRESS_CLASS', value: input.ingressClass }] : []),
    ...(input.serviceUrl
      ? [
          { name: 'SERVICE_URL', value: input.serviceUrl },
          { name: 'DEVTOOL_KUBE_SERVER', value: 'https://kubernetes.default.svc' },
        ]
      : []),
  ];
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace: input.namespace, labels },
    spec: {
      // --timeout is the cluster's to enforce: Kubernetes stops the pod after this long.
      activeDeadlineSeconds: input.timeoutSeconds,
      backoffLimit: 0,
      // A run nobody asked about again is cleaned up by Kubernetes after a day.
      ttlSecondsAfterFinished: 86_400,
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: 'Never',
          // The pod acts only with the user's token from the run's Secret, never the namespace's default account.
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          // Pod Security restricted, which a namespace may enforce (chart: namespaces.podSecurity).
          securityContext: { runAsUser: 1000, runAsGroup: 1000, runAsNonRoot: true, fsGroup: 1000, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [
            {
              name: 'runner',
              image: input.image,
              command: ['/bin/sh', '-c', RUNNER_SCRIPT, 'runner'],
              args: runnerArgs(input),
              workingDir: '/work',
              env,
              envFrom: [{ secretRef: { name: envSecretName(input.name, input.runId), optional: true } }],
              volumeMounts: [
                { name: 'credentials', mountPath: CREDENTIALS_DIR, readOnly: true },
                { name: 'work', mountPath: '/work' },
                { name: 'tmp', mountPath: '/tmp' },
              ],
              securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
              resources: { requests: { cpu: '50m', memory: '128Mi' }, limits: { memory: '1Gi' } },
            },
          ],
          volumes: [
            { name: 'credentials', secret: { secretName: credentialsSecretName(input.name, input.runId), defaultMode: 0o440 } },
            { name: 'work', emptyDir: {} },
            { name: 'tmp', emptyDir: {} },
          ],
        },
      },
    },
  };
}
