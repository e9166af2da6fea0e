/**
 * The dev pod's agent, asked directly whether it is up. The API server says a pod is ready only
 * after the kubelet has seen its container running, and the kubelet looks at the runtime once a
 * second (its generic PLEG relist): the agent listens 0 to 1 s before that, 0.5 s on average. So
 * while `up` waits for the API server, it also asks the newest dev pod of the spec, through the
 * port-forward, for the first bytes of its SSH port; the agent's SSH server speaks first
 * (`SSH-2.0-…`), so an answer is the agent itself, up. `up` then connects at once and the first
 * pass runs; the ready line still waits for the API server (activate.ts), so that every tool agrees
 * with `up` once it says ready.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { sleep as realSleep } from '../base/wait.ts';
import type { PortGreeting } from '../kube/port-check.ts';
import { newestFirst } from '../kube/workloads.ts';
import { ofSpec } from './names.ts';

/** Asks a pod's agent port once (podPortGreeting in production). */
export type GreetAgent = (pod: string) => Promise<PortGreeting>;

export interface AgentAnswerOptions {
  greet: GreetAgent;
  log(line: string): void;
  now?(): number;
  sleep?(ms: number): Promise<void>;
}

/** The pause between two asks while the pod is young: a refused port answers in some 20 ms. */
export const ASK_EVERY_MS = 100;
/** After this long (an image pull, a slow volume) the asks slow down: the API server is as quick then. */
export const QUICK_ASKS_MS = 3000;
export const SLOW_ASK_EVERY_MS = 1000;

/** The pause before the next ask of a pod first offered `sinceMs` ago. */
export function askInterval(sinceMs: number): number {
  return sinceMs < QUICK_ASKS_MS ? ASK_EVERY_MS : SLOW_ASK_EVERY_MS;
}

/** Whether a port's first bytes are an SSH server's version line (RFC 4253, 4.2). */
export function isSshGreeting(g: PortGreeting): boolean {
  return g.kind === 'greeted' && g.first.startsWith('SSH-');
}

export class AgentAnswer {
  /** Resolves with the pod whose agent answered; never, once stopped without one. */
  readonly answered: Promise<string>;
  private resolveAnswered!: (pod: string) => void;
  private candidate?: { pod: string; since: number };
  /** Pods that answered with something other than SSH: not asked again. */
  private readonly strangers = new Set<string>();
  private stopped = false;
  private wakeLoop?: () => void;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(private readonly o: AgentAnswerOptions) {
    this.now = o.now ?? Date.now;
    this.sleep = o.sleep ?? realSleep;
    this.answered = new Promise((resolve) => (this.resolveAnswered = resolve));
    void this.loop();
  }

  /** The pod to ask from now on (the newest dev pod of the spec, scheduled); undefined: none right now. */
  offer(pod: string | undefined): void {
    if (pod === this.candidate?.pod) return;
    this.candidate = pod === undefined || this.strangers.has(pod) ? undefined : { pod, since: this.now() };
    this.wake();
  }

  stop(): void {
    this.stopped = true;
    this.wake();
  }

  private wake(): void {
    const w = this.wakeLoop;
    this.wakeLoop = undefined;
    w?.();
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      const c = this.candidate;
      if (!c) {
        await new Promise<void>((resolve) => (this.wakeLoop = resolve));
        continue;
      }
      const g = await this.o.greet(c.pod).catch((err: unknown): PortGreeting => ({ kind: 'not-yet', why: (err as Error).message }));
      if (this.stopped) return;
      if (isSshGreeting(g)) {
        this.stopped = true;
        this.resolveAnswered(c.pod);
        return;
      }
      if (this.candidate === c && g.kind !== 'not-yet') {
        // Gone, or something else listens on the agent's port: the API server's word decides for this pod.
        if (g.kind === 'greeted') {
          this.strangers.add(c.pod);
          this.o.log(`pod ${c.pod}: its agent port answered ${JSON.stringify(g.first.slice(0, 40))}, not SSH; waiting for the API server instead`);
        }
        this.candidate = undefined;
        continue;
      }
      await this.sleep(askInterval(this.now() - c.since));
    }
  }
}

/**
 * The dev pod to ask for its agent: the newest of this spec, bound to a node and not ending, and
 * only when the dev container is its one container. A sidecar's readiness (a mesh proxy the app
 * needs) is the API server's to say.
 */
export function agentCandidate(pods: readonly V1Pod[], specHash: string | undefined): string | undefined {
  const alone = (p: V1Pod) => p.spec?.containers.length === 1 && !(p.spec.initContainers ?? []).some((c) => c.restartPolicy === 'Always');
  const candidates = pods.filter((p) => ofSpec(p, specHash) && !p.metadata?.deletionTimestamp && p.spec?.nodeName && alone(p));
  return newestFirst(candidates)[0]?.metadata?.name;
}
