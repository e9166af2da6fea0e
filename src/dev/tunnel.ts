/**
 * The CLI's way into the dev container: a loopback listener whose connections go through the API
 * server's port-forward to the agent's SSH port (127.0.0.1:2222 in the pod), and one SSH connection
 * over it that carries everything else: exec sessions, the manifest's forwards (direct-tcpip) and
 * reverse forwards (tcpip-forward). The host key is pinned (it comes from the Secret devtool wrote).
 *
 * Peers' forwards die with the pod and never come back; here the SSH connection is redialled with
 * backoff whenever it drops (pod restart, port-forward or API server gone), against whatever dev pod
 * is current, and local forward listeners stay open throughout, so they work again by themselves.
 * When to redial, and who gets which connection, is reconnect.ts's (unit-tested with fakes).
 */
import { createServer, connect as tcpConnect, type Server, type Socket } from 'node:net';
import { Writable, type Duplex } from 'node:stream';
import type { V1Pod } from '@kubernetes/client-node';
import ssh2 from 'ssh2';
import { DevtoolError } from '../base/errors.ts';
import { oneLine } from '../base/text.ts';
import type { KubeClient } from '../kube/client.ts';
import type { Logger } from '../log/logger.ts';
import type { Forward, Reverse } from '../manifest/model.ts';
import { devPods, readyDevPodObject } from './activate.ts';
import { blobOfPublicKey } from './keys.ts';
import type { ExecCapture, StdinWriter } from '../kube/exec.ts';
import { AGENT_SSH_PORT, devContainerName } from './mirror.ts';
import { RECONNECTED, Reconnector } from './reconnect.ts';
import { watchWake } from './wake.ts';

/** After a sleep, how long the SSH connection has to answer before it is dropped and dialled anew. */
const WAKE_PROBE_MS = 3000;

export interface TunnelOptions {
  client: KubeClient;
  devName: string;
  hostPublicKey: string;
  clientPrivateKey: string;
  log: Logger;
  forwards?: readonly Forward[];
  reverses?: readonly Reverse[];
  /** One-line notices for the user (connection lost, back). */
  notice?(message: string): void;
  /** Whether the SSH connection is live, each time that changes. */
  connectionChanged?(connected: boolean): void;
  /** Called with the dev pods when none is ready to dial (a new one may wait for its agent: agent-inject.ts); may throw why. */
  noReadyPod?(pods: V1Pod[]): void;
}

/**
 * Every socket of the tunnel sends at once (TCP_NODELAY). Nagle's algorithm holds a small write
 * back while an earlier one is unacknowledged, and the peer delays its ACK by up to 40 ms: an SSH
 * window adjustment or a Syncthing request (small writes, answered) then waits that long.
 */
const NO_DELAY = { noDelay: true };

export class DevTunnel {
  private pfServer?: Server;
  private pfPort = 0;
  private listeners: Server[] = [];
  /** The SSH connection, redialled whenever it drops. */
  private readonly link: Reconnector<ssh2.Client>;
  /** A connection still in its handshake (up to its 30 s ready timeout). */
  private connecting?: ssh2.Client;
  private readonly sockets = new Set<Socket | Duplex>();
  private stopWatchingWake = () => {};
  /** The pod for the first dial only, given by start(): its agent answers, the API server may not say ready yet. */
  private firstPod?: string;
  /** The pod of the latest port-forward: the live connection's, once it is up. */
  private forwardedPod?: string;
  /** Its node, when the API server said it (not for the first dial's pod). */
  private forwardedNode?: string;
  private closed = false;

  constructor(private readonly o: TunnelOptions) {
    this.link = new Reconnector({
      dial: () =>
        this.connectOnce().finally(() => {
          this.connecting = undefined;
          // One dial only: any later one goes to whichever pod the API server says is ready.
          this.firstPod = undefined;
        }),
      connected: (c) => this.reverse(c),
      // Which pod, and where: after a drain it is another node's.
      notice: (m) => this.o.notice?.(m === RECONNECTED ? `${m} (pod ${this.forwardedPod}${this.forwardedNode ? ` on node ${this.forwardedNode}` : ''})` : m),
      changed: (connected) => this.o.connectionChanged?.(connected),
      log: o.log,
    });
  }

  /**
   * Opens the listeners and waits for the first SSH connection (or fails after `timeoutMs`). The
   * first dial goes to `pod` when given (a dev pod whose agent answers, agent-answer.ts), else to the
   * ready dev pod.
   */
  async start(timeoutMs = 60_000, pod?: string): Promise<void> {
    this.firstPod = pod;
    await this.listen();
    this.link.start();
    this.stopWatchingWake = watchWake((slept) => this.woke(slept));
    await this.connection(timeoutMs);
  }

  /**
   * Opens the loopback listeners: the port-forward's and the manifest's forwards. `up` calls it
   * before anything changes in the cluster, so a local port that is taken fails the `up` while the
   * original still runs; the listeners are held from then on (no other program can take the port
   * in between). Connections wait for the SSH connection. Idempotent.
   */
  async listen(): Promise<void> {
    if (this.pfServer) return;
    this.pfServer = createServer(NO_DELAY, (sock) => void this.portForward(sock));
    this.pfPort = await listen(this.pfServer, 0);
    for (const f of this.o.forwards ?? []) {
      const server = createServer(NO_DELAY, (sock) => void this.forwardOut(sock, f));
      try {
        await listen(server, f.local);
      } catch (err) {
        throw new DevtoolError(
          `cannot forward localhost:${f.local}: ` +
            `${(err as NodeJS.ErrnoException).code === 'EADDRINUSE' ? 'the port is in use on this machine' : (err as Error).message}`,
        );
      }
      this.listeners.push(server);
    }
  }

  /**
   * Runs a command in the current dev pod's dev container through the API server's exec (not this
   * SSH connection: for bulk input, such as the sync bootstrap's tar stream, the exec carries twice
   * the throughput of SSH inside a port-forward, measured with 100 MB: 1.8 s against 3.5 s).
   */
  async runWithInput(command: string[], input: StdinWriter, timeoutMs: number): Promise<ExecCapture> {
    // The connected pod first: just after `up` connects, the API server may not say it is ready yet.
    const pod = (await this.readForwardedPod()) ?? (await readyDevPodObject(this.o.client, this.o.devName));
    if (!pod) throw new DevtoolError('no running dev pod');
    const { execCapture } = await import('../kube/exec.ts');
    return execCapture(this.o.client, pod.metadata!.name!, devContainerName(pod), command, { timeoutMs, maxBytes: 64 * 1024, stdin: input });
  }

  /**
   * A loopback port on this machine forwarded to host:port as seen from the dev container (the
   * sync service's ports); like the manifest's forwards, it stays open across reconnects. A
   * connection made while there is no SSH connection waits for one, unless `refuseWhileDown`:
   * then it is closed at once (the local Syncthing, started before the dev pod, must not sit out
   * its 10 s TLS handshake timeout on a connection held open for a pod still starting).
   */
  async openForward(host: string, port: number, o: { refuseWhileDown?: boolean } = {}): Promise<number> {
    const f: Forward = { local: 0, remote: port, service: host };
    const server = createServer(NO_DELAY, (sock) => {
      if (o.refuseWhileDown && !this.link.isConnected) sock.destroy();
      else void this.forwardOut(sock, f);
    });
    const local = await listen(server, 0);
    this.listeners.push(server);
    return local;
  }

  /** The live SSH connection, waiting for a reconnect if there is none right now. */
  connection(timeoutMs = 30_000): Promise<ssh2.Client> {
    return this.link.connection(timeoutMs);
  }

  /** The dev pod the live connection goes to; undefined while there is none. */
  get connectedPod(): string | undefined {
    return this.link.isConnected ? this.forwardedPod : undefined;
  }

  /**
   * Ends everything, at once: nothing may keep `up` alive after it. (Waiters' timers and a
   * handshake in progress once kept an `up` running for up to 30 s after SIGTERM, seen when
   * `down` had removed the dev pod and the tunnel was reconnecting.)
   */
  close(): void {
    this.closed = true;
    this.stopWatchingWake();
    for (const s of this.listeners) s.close();
    this.pfServer?.close();
    // Ends the live connection and fails the waiters (their timers cleared).
    this.link.close();
    this.connecting?.end();
    for (const s of this.sockets) s.destroy();
  }

  /**
   * The process did not run for `slept` ms (the machine slept, or `up` was stopped: wake.ts). The
   * SSH connection may be dead without knowing it: the agent drops a client that has not answered
   * its keepalive for 45 s, and after a real suspend the network path may be gone, so no reset
   * ever arrives. One round trip tells; a connection that does not answer is dropped and dialled
   * again at once, and the forwards and sync follow the new one.
   */
  private woke(slept: number): void {
    this.o.log.debug(`dev tunnel: this process did not run for ${(slept / 1000).toFixed(1)} s (the machine slept or it was stopped); checking the connection`);
    const started = Date.now();
    void this.link.verify(probe, WAKE_PROBE_MS).then((answered) => {
      if (answered) this.o.log.debug(`dev tunnel: the connection answered after the sleep in ${Date.now() - started} ms`);
    });
  }

  private async readForwardedPod(): Promise<V1Pod | undefined> {
    if (!this.forwardedPod || !this.link.isConnected) return undefined;
    try {
      const pod = await this.o.client.core.readNamespacedPod({ name: this.forwardedPod, namespace: this.o.client.namespace });
      return pod.metadata?.deletionTimestamp ? undefined : pod;
    } catch {
      return undefined;
    }
  }

  private connectOnce(): Promise<ssh2.Client> {
    const expected = blobOfPublicKey(this.o.hostPublicKey);
    return new Promise((resolve, reject) => {
      const c = new ssh2.Client();
      this.connecting = c;
      c.once('ready', () => {
        c.setNoDelay(true);
        resolve(c);
      });
      c.once('error', (err) => reject(err));
      c.once('close', () => reject(new Error('connection closed during the handshake')));
      // Later errors end in 'close', which the loop handles; the reason goes to devtool.log (an
      // `exec` that lost its connection has no other trace of why: keepalive, reset, port-forward).
      // Not after close(): it destroys the port-forward's end of the connection with the
      // client's goodbye unread, and the reset that follows is this side's own doing.
      c.on('error', (err) => {
        if (!this.closed) this.o.log.debug(`dev tunnel: ssh connection: ${err.message}`);
      });
      c.connect({
        host: '127.0.0.1',
        port: this.pfPort,
        username: 'devtool',
        privateKey: this.o.clientPrivateKey,
        // Pinned: the key devtool generated for this environment, nothing else.
        hostVerifier: (key: Buffer) => key.equals(expected),
        // Notice a dead port-forward within ~15 s, like the agent does from its side.
        keepaliveInterval: 5000,
        keepaliveCountMax: 3,
        readyTimeout: 30_000,
      });
    });
  }

  /** One SSH transport connection -> one API port-forward stream to the current dev pod. */
  private async portForward(sock: Socket): Promise<void> {
    this.track(sock);
    try {
      const ready = this.firstPod ? undefined : await readyDevPodObject(this.o.client, this.o.devName);
      const pod = this.firstPod ?? ready?.metadata?.name;
      if (!pod) {
        if (this.o.noReadyPod) this.o.noReadyPod(await devPods(this.o.client, this.o.devName));
        throw new Error('no ready dev pod');
      }
      this.forwardedPod = pod;
      this.forwardedNode = ready?.spec?.nodeName;
      const { PortForward } = await import('@kubernetes/client-node');
      // The kubelet's error stream says why a forward ended on its side (the pod's port refused, the pod gone).
      const errors = new Writable({
        write: (chunk: Buffer, _encoding, done) => {
          // Its first message, the port number, arrives here as an empty chunk.
          const text = oneLine(chunk.toString('utf8'));
          if (text) this.o.log.debug(`dev tunnel: port-forward to ${pod}: ${text}`);
          done();
        },
      });
      const ws = await new PortForward(this.o.client.kc, true).portForward(this.o.client.namespace, pod, [AGENT_SSH_PORT], sock, errors, sock);
      const socket = typeof ws === 'function' ? ws() : ws;
      socket?.on('close', (code?: number, reason?: Buffer) => {
        this.o.log.debug(`dev tunnel: port-forward to ${pod} closed${code ? ` (${code}${reason?.length ? ` ${reason}` : ''})` : ''}`);
        sock.destroy();
      });
      sock.on('close', () => socket?.close());
    } catch (err) {
      this.link.lastError = (err as Error).message;
      sock.destroy();
    }
  }

  private async forwardOut(sock: Socket, f: Forward): Promise<void> {
    this.track(sock);
    sock.on('error', () => undefined);
    try {
      const c = await this.connection(30_000);
      const host = f.service ?? '127.0.0.1';
      c.forwardOut('127.0.0.1', sock.remotePort ?? 0, host, f.remote, (err, ch) => {
        if (err) {
          this.o.log.debug(`forward ${f.local} -> ${host}:${f.remote}: ${err.message}`);
          sock.destroy();
          return;
        }
        splice(sock, ch);
      });
    } catch {
      sock.destroy();
    }
  }

  /** Asks the agent to listen for each reverse forward; called on every (re)connection. */
  private reverse(c: ssh2.Client): void {
    const reverses = this.o.reverses ?? [];
    if (reverses.length === 0) return;
    c.on('tcp connection', (info, accept, reject) => {
      const r = reverses.find((x) => x.remote === info.destPort);
      if (!r) return reject();
      const local = tcpConnect({ port: r.local, host: '127.0.0.1', noDelay: true });
      local.once('connect', () => splice(local, accept()));
      local.once('error', () => reject());
    });
    for (const r of reverses) {
      c.forwardIn('127.0.0.1', r.remote, (err) => {
        if (err) this.o.notice?.(`reverse forward of port ${r.remote} in the dev container failed: ${err.message}`);
      });
    }
  }

  private track(s: Socket | Duplex): void {
    this.sockets.add(s);
    s.once('close', () => this.sockets.delete(s));
  }
}

/**
 * One round trip on an SSH connection: a forward to port 0 in the dev container, which the agent
 * refuses at once (no connection can be made there). Either answer, refusal or channel, proves the
 * far end alive; nothing runs and nothing stays open. Rejects when it cannot even be sent.
 */
function probe(c: ssh2.Client): Promise<void> {
  return new Promise((resolve, reject) => {
    try {
      c.forwardOut('127.0.0.1', 0, '127.0.0.1', 0, (err, ch) => {
        ch?.close();
        // 'No response from server': the connection ended before the answer.
        if (err && /no response/i.test(err.message)) reject(err);
        else resolve();
      });
    } catch (err) {
      reject(err as Error);
    }
  });
}

/** Joins two streams both ways; either end closing closes the other. */
function splice(a: Duplex, b: Duplex): void {
  a.pipe(b).pipe(a);
  const end = () => {
    a.destroy();
    b.destroy();
  };
  a.once('close', end);
  b.once('close', end);
  a.on('error', end);
  b.on('error', end);
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve((server.address() as { port: number }).port);
    });
  });
}
