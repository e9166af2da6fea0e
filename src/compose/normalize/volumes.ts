/**
 * Volumes: the top-level declarations (claims to create) and each service's mounts.
 *
 * Short syntax: `NAME:PATH[:MODE]` (NAME declared at the top level), `PATH` alone (anonymous),
 * `HOSTPATH:PATH[:MODE]` where HOSTPATH starts with ".", "/" or "~" (Compose's rule). Long syntax:
 * {type: volume|bind|tmpfs, source, target, read_only, volume: {subpath}}.
 */
import { isAbsolute, join, resolve } from 'node:path';
import type { Path } from '../../yaml/errors.ts';
import { didYouMean } from '../../base/suggest.ts';
import { userHome } from '../../base/platform.ts';
import type { ComposeVolume, ServiceVolume } from '../model.ts';
import { get, isObj, show, type NormalizeState, type Obj } from './state.ts';
import { annotations } from './fields.ts';

const defaultSize = '1Gi';
/** A Kubernetes quantity as a claim size takes it: a number with an optional SI or binary suffix. */
const quantity = /^(\d+(\.\d+)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|k|K|M|G|T|P|E)?$/;
const modes = new Set(['ro', 'rw', 'z', 'Z', 'nocopy', 'cached', 'delegated', 'consistent', 'shared', 'rshared', 'slave', 'rslave', 'private', 'rprivate']);

export function topLevelVolumes(ctx: NormalizeState, value: unknown): ComposeVolume[] {
  if (!isObj(value)) return [];
  const out: ComposeVolume[] = [];
  for (const name of Object.keys(value)) {
    const path = ['volumes', name];
    const v = value[name];
    const spec: Obj = isObj(v) ? v : {};
    const opts = get(spec, 'driver_opts');
    let size = defaultSize;
    const rawSize = get(opts, 'size');
    if (rawSize !== undefined) {
      const s = String(rawSize).trim();
      if (quantity.test(s)) size = s;
      else ctx.fail([...path, 'driver_opts', 'size'], `invalid size ${show(rawSize)}: use a Kubernetes quantity such as 1Gi or 500Mi`);
    }
    const storageClass = get(opts, 'class');
    for (const key of Object.keys(isObj(opts) ? opts : {})) {
      if (key !== 'size' && key !== 'class')
        ctx.warn(`volumes.${name}.driver_opts.${key} is ignored: devtool reads only driver_opts.size and driver_opts.class`);
    }
    if (get(spec, 'driver') !== undefined) ctx.warn(`volumes.${name}.driver is ignored: on Kubernetes the storage class decides (driver_opts.class)`);
    const external = get(spec, 'external');
    const isExternal = external === true || external === 'true' || isObj(external);
    const customName = get(spec, 'name') ?? get(external, 'name');
    const labels = annotations(ctx, get(spec, 'labels'), [...path, 'labels']);
    out.push({
      name,
      pos: ctx.at(path, 'key'),
      claimName: typeof customName === 'string' && customName !== '' ? customName : name,
      external: isExternal,
      size,
      ...(typeof storageClass === 'string' && storageClass !== '' ? { storageClass } : {}),
      labels,
    });
  }
  return out;
}

export function serviceVolumes(ctx: NormalizeState, value: unknown, path: Path, declared: ReadonlySet<string>): ServiceVolume[] {
  if (!Array.isArray(value)) return [];
  const out: ServiceVolume[] = [];
  const targets = new Map<string, Path>();
  value.forEach((entry, i) => {
    const at = [...path, i];
    const mount = typeof entry === 'string' ? shortSyntax(ctx, entry, at, declared) : isObj(entry) ? longSyntax(ctx, entry, at, declared) : undefined;
    if (!mount) return;
    if (targets.has(mount.target)) {
      ctx.fail(at, `${mount.target} is mounted twice in this service`);
      return;
    }
    targets.set(mount.target, at);
    out.push(mount);
  });
  return out;
}

function shortSyntax(ctx: NormalizeState, spec: string, at: Path, declared: ReadonlySet<string>): ServiceVolume | undefined {
  const pos = ctx.at(at);
  const parts = volumeSpecParts(spec);
  if (parts.length === 1) {
    const target = parts[0]!.trim();
    if (!checkTarget(ctx, target, at)) return undefined;
    return { kind: 'anonymous', target, readOnly: false, pos };
  }
  if (parts.length > 3 || parts.some((p) => p === '')) {
    ctx.fail(at, `invalid volume ${show(spec)}: use NAME:PATH, HOST_PATH:PATH or PATH, with an optional :ro`);
    return undefined;
  }
  const [source, target, mode] = parts as [string, string, string | undefined];
  let readOnly = false;
  for (const m of (mode ?? '').split(',').filter((x) => x !== '')) {
    if (!modes.has(m)) {
      ctx.fail(at, `unknown volume mode ${show(m)} in ${show(spec)}: use ro or rw`);
      return undefined;
    }
    if (m === 'ro') readOnly = true;
  }
  if (!checkTarget(ctx, target, at)) return undefined;
  if (isHostPath(source)) return { kind: 'bind', source: hostPath(ctx, source), target, readOnly, pos };
  if (!checkDeclared(ctx, source, at, declared)) return undefined;
  return { kind: 'named', volume: source, target, readOnly, pos };
}

/**
 * The `:`-separated parts of a short volume spec. A Windows drive letter (`C:\data:/data`, also
 * `C:/data`) stays with its path, as Docker Compose reads it.
 */
export function volumeSpecParts(spec: string): string[] {
  const drive = /^[A-Za-z]:[\\/]/.test(spec) ? spec.slice(0, 2) : '';
  const parts = spec.slice(drive.length).split(':');
  parts[0] = drive + parts[0];
  return parts;
}

function longSyntax(ctx: NormalizeState, spec: Obj, at: Path, declared: ReadonlySet<string>): ServiceVolume | undefined {
  const pos = ctx.at(at);
  const type = get(spec, 'type');
  const target = get(spec, 'target');
  if (typeof target !== 'string') {
    ctx.fail(at, 'missing required field "target" (the path in the container)');
    return undefined;
  }
  if (!checkTarget(ctx, target, [...at, 'target'])) return undefined;
  const ro = get(spec, 'read_only');
  const readOnly = ro === undefined ? false : (ctx.bool(ro, [...at, 'read_only']) ?? false);
  const source = get(spec, 'source');
  switch (type) {
    case 'volume': {
      if (source === undefined || source === '') return { kind: 'anonymous', target, readOnly, pos };
      const name = String(source);
      if (!checkDeclared(ctx, name, [...at, 'source'], declared)) return undefined;
      const subPath = get(get(spec, 'volume'), 'subpath');
      return { kind: 'named', volume: name, target, readOnly, ...(typeof subPath === 'string' && subPath !== '' ? { subPath } : {}), pos };
    }
    case 'bind':
      if (typeof source !== 'string' || source === '') {
        ctx.fail(at, 'a bind mount needs a "source" (the host path)');
        return undefined;
      }
      return { kind: 'bind', source: hostPath(ctx, source), target, readOnly, pos };
    case 'tmpfs':
      return { kind: 'tmpfs', target, pos };
    default:
      ctx.warn(`volume type ${show(type)} is not supported on Kubernetes: the mount of ${target} is ignored`);
      return undefined;
  }
}

function checkTarget(ctx: NormalizeState, target: string, at: Path): boolean {
  if (target.startsWith('/')) return true;
  ctx.fail(at, `the mount path ${show(target)} must be absolute (start with /)`);
  return false;
}

function checkDeclared(ctx: NormalizeState, name: string, at: Path, declared: ReadonlySet<string>): boolean {
  if (declared.has(name)) return true;
  ctx.fail(at, `volume ${show(name)} is not declared in the top-level volumes${didYouMean(name, declared)}; declare it, or write ./${name} for a host folder`);
  return false;
}

function isHostPath(source: string): boolean {
  return source.startsWith('.') || source.startsWith('/') || source.startsWith('~') || /^[A-Za-z]:[\\/]/.test(source);
}

function hostPath(ctx: NormalizeState, source: string): string {
  if (source === '~' || source.startsWith('~/')) return join(userHome(process.env), source.slice(1));
  return isAbsolute(source) ? source : resolve(ctx.projectDir, source);
}
