/**
 * The devtool-bin image (agent/README.md, "The image") made by the CLI from the programs of its own
 * install, for one architecture, and pushed to the context's registry when the registry has none
 * (docs/agent-delivery.md). Its layout is agent/build.sh's: one layer holding
 * /devtool-bin/devtool-agent and /devtool-bin/syncthing (owner 0:0, mtime 0, mode 0755), or from a
 * release's host bundle only /devtool-bin/devtool-agent (Syncthing inside), the installer as
 * entrypoint, user 65532; the same programs give the same digest.
 */
import { readFile } from 'node:fs/promises';
import { DockerCredentials } from '../image/docker-config.ts';
import { descriptor, ociDigest, pushOciImage, type OciContent, type OciImage } from '../image/oci-push.ts';
import { formatReference, parseReference } from '../image/reference.ts';
import { lookupTag } from '../image/registry.ts';
import { agentPrograms } from './agent-binaries.ts';
import { AGENT_BIN_DIR } from './mirror.ts';

const LAYER = 'application/vnd.oci.image.layer.v1.tar';
const CONFIG = 'application/vnd.oci.image.config.v1+json';
const MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
const INDEX = 'application/vnd.oci.image.index.v1+json';

/** The image's user (agent/build.sh IMAGE_USER): numeric, so runAsNonRoot admits it. */
const IMAGE_USER = '65532:65532';

/** The devtool-bin image of `arch` holding these programs (no syncthing: the agent is the host bundle). Pure. */
export function devtoolBinImage(o: { agent: Buffer; syncthing?: Buffer; arch: string; version: string }): OciImage {
  const layer: OciContent = {
    mediaType: LAYER,
    bytes: ustar([
      { name: 'devtool-bin/', mode: 0o755 },
      { name: 'devtool-bin/devtool-agent', mode: 0o755, body: o.agent },
      ...(o.syncthing ? [{ name: 'devtool-bin/syncthing', mode: 0o755, body: o.syncthing }] : []),
    ]),
  };
  const config: OciContent = {
    mediaType: CONFIG,
    bytes: json({
      architecture: o.arch,
      os: 'linux',
      config: {
        User: IMAGE_USER,
        Entrypoint: ['/devtool-bin/devtool-agent', 'install', AGENT_BIN_DIR],
        Labels: { 'org.opencontainers.image.title': 'devtool-bin', 'org.opencontainers.image.version': o.version },
      },
      rootfs: { type: 'layers', diff_ids: [ociDigest(layer.bytes)] },
    }),
  };
  const manifest: OciContent = {
    mediaType: MANIFEST,
    bytes: json({ schemaVersion: 2, mediaType: MANIFEST, config: descriptor(config), layers: [descriptor(layer)] }),
  };
  const index: OciContent = {
    mediaType: INDEX,
    bytes: json({ schemaVersion: 2, mediaType: INDEX, manifests: [descriptor(manifest, { platform: { architecture: o.arch, os: 'linux' } })] }),
  };
  return { blobs: [layer, config], manifests: [manifest], index };
}

/**
 * Pushes the devtool-bin image of `arch` under `image` (the context registry's
 * `<registry>/devtool-bin:<version>`) when the registry does not have that tag; resolves with the
 * image's name with its digest, to run, or undefined when the registry has it or cannot be asked.
 */
export async function pushAgentImage(image: string, arch: string, o: { env: Readonly<NodeJS.ProcessEnv>; version: string }): Promise<string | undefined> {
  const ref = parseReference(image, 'the agent image');
  const tag = ref.tag ?? o.version;
  const creds = await DockerCredentials.load(o.env).forRegistry(ref.registry);
  if ((await lookupTag(ref.registry, ref.repository, tag, creds)).state !== 'absent') return undefined;
  const programs = await agentPrograms(arch, o.env);
  const [agent, syncthing] = await Promise.all([readFile(programs.agent), programs.syncthing ? readFile(programs.syncthing) : undefined]);
  const content = devtoolBinImage({ agent, ...(syncthing ? { syncthing } : {}), arch, version: o.version });
  const digest = await pushOciImage(ref.registry, ref.repository, tag, content, creds);
  return formatReference({ registry: ref.registry, repository: ref.repository, tag, digest });
}

function json(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value));
}

interface TarEntry {
  /** Ends with "/" for a directory. */
  name: string;
  mode: number;
  body?: Buffer;
}

const BLOCK = 512;

/** A ustar archive of short names, owner 0:0 and mtime 0: the same entries always give the same bytes. */
export function ustar(entries: readonly TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    const size = e.body?.length ?? 0;
    const h = Buffer.alloc(BLOCK);
    h.write(e.name, 0, 100, 'utf8');
    const octal = (at: number, width: number, n: number) => h.write(`${n.toString(8).padStart(width - 1, '0')}\0`, at, width, 'ascii');
    octal(100, 8, e.mode);
    octal(108, 8, 0);
    octal(116, 8, 0);
    octal(124, 12, size);
    octal(136, 12, 0);
    h.write(e.name.endsWith('/') ? '5' : '0', 156, 1, 'ascii');
    h.write('ustar\0' + '00', 257, 8, 'ascii');
    // The checksum is counted with its own field as spaces.
    h.fill(' ', 148, 156);
    const sum = h.reduce((n, b) => n + b, 0);
    h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'ascii');
    parts.push(h);
    if (e.body) parts.push(e.body, Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK));
  }
  parts.push(Buffer.alloc(2 * BLOCK));
  return Buffer.concat(parts);
}
