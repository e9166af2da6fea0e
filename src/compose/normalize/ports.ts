/**
 * `ports` and `expose` to one list of PortMapping. Short syntax: [HOST_IP:][HOST:]CONTAINER[/PROTO]
 * where HOST and CONTAINER may be ranges (8000-8010); long syntax: {target, published, protocol,
 * host_ip}. Every number must be a port, 1..65535, whatever the notation.
 */
import { formatPos, type Path } from '../../yaml/errors.ts';
import type { PortMapping, Protocol } from '../model.ts';
import { get, isObj, show, type NormalizeState } from './state.ts';

/** More ports than this in one service is surely a typo in a range (and a huge Service object). */
const maxPortsPerService = 1000;

interface Range {
  start: number;
  end: number;
}

export function normalizePorts(ctx: NormalizeState, service: Record<string, unknown>, path: Path): PortMapping[] {
  const out: PortMapping[] = [];
  const ports = get(service, 'ports');
  if (Array.isArray(ports)) {
    // A host port (and protocol) maps to one container port: Docker refuses a second mapping, and
    // the service's public endpoint for that host port could only serve one of them.
    const hostPorts = new Map<string, PortMapping>();
    ports.forEach((p, i) => {
      const at = [...path, 'ports', i];
      for (const m of portEntry(ctx, p, at)) {
        if (m.published !== undefined) {
          const key = `${m.published}/${m.protocol}`;
          const first = hostPorts.get(key);
          if (first && first.container !== m.container) {
            ctx.fail(
              at,
              `host port ${m.published}/${m.protocol.toLowerCase()} is mapped twice: to container port ${first.container} (${formatPos(first.pos)}) ` +
                `and to ${m.container}; use another host port`,
            );
            continue;
          }
          if (!first) hostPorts.set(key, m);
        }
        out.push(m);
      }
    });
  }
  const expose = get(service, 'expose');
  if (Array.isArray(expose)) {
    expose.forEach((e, i) => {
      const at = [...path, 'expose', i];
      const parsed = splitProto(ctx, String(e), at);
      if (!parsed) return;
      const range = parseRange(ctx, parsed.spec, at);
      if (range) for (let p = range.start; p <= range.end; p++) out.push({ container: p, protocol: parsed.protocol, pos: ctx.at(at) });
    });
  }
  if (out.length > maxPortsPerService) {
    ctx.fail([...path, 'ports'], `declares ${out.length} ports; at most ${maxPortsPerService} are supported (check the ranges)`);
    return [];
  }
  // The same container port may be listed twice (public and bare, or once per host port): keep
  // each (port, protocol, published) once.
  const seen = new Set<string>();
  return out.filter((p) => {
    const key = `${p.container}/${p.protocol}/${p.published ?? ''}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function portEntry(ctx: NormalizeState, entry: unknown, at: Path): PortMapping[] {
  const pos = ctx.at(at);
  if (typeof entry === 'number') {
    const port = ctx.port(entry, at);
    return port === undefined ? [] : [{ container: port, protocol: 'TCP', pos }];
  }
  if (isObj(entry)) {
    const target = get(entry, 'target');
    if (target === undefined) {
      ctx.fail(at, 'missing required field "target" (the container port)');
      return [];
    }
    const container = ctx.port(target, [...at, 'target']);
    const protocol = protocolOf(ctx, get(entry, 'protocol'), [...at, 'protocol']);
    const hostIp = typeof get(entry, 'host_ip') === 'string' ? (get(entry, 'host_ip') as string) : undefined;
    const publishedRaw = get(entry, 'published');
    if (container === undefined || protocol === undefined) return [];
    if (publishedRaw === undefined || publishedRaw === null || publishedRaw === '') return [{ container, protocol, pos, ...(hostIp ? { hostIp } : {}) }];
    const published = parseRange(ctx, String(publishedRaw), [...at, 'published']);
    if (!published) return [];
    // A published range for one target means "any free host port of the range": one public port.
    return [{ container, published: published.start, protocol, pos, ...(hostIp ? { hostIp } : {}) }];
  }
  if (typeof entry !== 'string') {
    ctx.fail(at, `must be a port ("8080:80", "80") or a map, not ${show(entry)}`);
    return [];
  }
  const parsed = splitProto(ctx, entry, at);
  if (!parsed) return [];
  const split = splitHost(parsed.spec);
  if (!split) {
    ctx.fail(at, `invalid port ${show(entry)}: use [HOST_IP:][HOST:]CONTAINER[/PROTOCOL], e.g. "8080:80"`);
    return [];
  }
  const container = parseRange(ctx, split.container, at);
  if (!container) return [];
  const host = split.host ? parseRange(ctx, split.host, at) : undefined;
  if (split.host && !host) return [];
  const base = { protocol: parsed.protocol, pos, ...(split.hostIp ? { hostIp: split.hostIp } : {}) };
  const count = container.end - container.start + 1;
  if (host && count > 1 && host.end - host.start + 1 !== count) {
    ctx.fail(at, `invalid port ${show(entry)}: the host range and the container range have different sizes`);
    return [];
  }
  const out: PortMapping[] = [];
  for (let i = 0; i < count; i++) {
    // A host range for a single container port means "any free port of the range": one public port.
    const published = host ? (count === 1 ? host.start : host.start + i) : undefined;
    out.push({ container: container.start + i, ...(published !== undefined ? { published } : {}), ...base });
  }
  return out;
}

function splitProto(ctx: NormalizeState, text: string, at: Path): { spec: string; protocol: Protocol } | undefined {
  const slash = text.lastIndexOf('/');
  if (slash < 0) return { spec: text.trim(), protocol: 'TCP' };
  const protocol = protocolOf(ctx, text.slice(slash + 1), at);
  return protocol ? { spec: text.slice(0, slash).trim(), protocol } : undefined;
}

function protocolOf(ctx: NormalizeState, value: unknown, at: Path): Protocol | undefined {
  if (value === undefined || value === null) return 'TCP';
  const p = String(value).toLowerCase();
  if (p === 'tcp' || p === 'udp' || p === 'sctp') return p.toUpperCase() as Protocol;
  ctx.fail(at, `unknown protocol ${show(value)}: use tcp, udp or sctp`);
  return undefined;
}

/** "[::1]:8080:80", "127.0.0.1:8080:80", "127.0.0.1::80", "8080:80", "80". */
function splitHost(spec: string): { hostIp?: string; host?: string; container: string } | undefined {
  let rest = spec;
  let hostIp: string | undefined;
  if (rest.startsWith('[')) {
    const close = rest.indexOf(']');
    if (close < 0 || rest[close + 1] !== ':') return undefined;
    hostIp = rest.slice(1, close);
    rest = rest.slice(close + 2);
  }
  const parts = rest.split(':');
  if (hostIp !== undefined) {
    if (parts.length !== 2) return undefined;
    return { hostIp, ...(parts[0] ? { host: parts[0] } : {}), container: parts[1]! };
  }
  if (parts.length === 1) return { container: parts[0]! };
  if (parts.length === 2) return parts[0] ? { host: parts[0], container: parts[1]! } : undefined;
  if (parts.length === 3) return { hostIp: parts[0]!, ...(parts[1] ? { host: parts[1] } : {}), container: parts[2]! };
  return undefined;
}

/** "80" or "8000-8010", each number a valid port. */
function parseRange(ctx: NormalizeState, text: string, at: Path): Range | undefined {
  const m = /^\s*(\d+)(?:\s*-\s*(\d+))?\s*$/.exec(text);
  if (!m) {
    ctx.fail(at, `invalid port ${show(text)}: use a number (1 to 65535) or a range like 8000-8010`);
    return undefined;
  }
  const start = ctx.port(m[1], at);
  const end = m[2] === undefined ? start : ctx.port(m[2], at);
  if (start === undefined || end === undefined) return undefined;
  if (end < start) {
    ctx.fail(at, `invalid port range ${show(text)}: the range ends before it starts`);
    return undefined;
  }
  if (end - start + 1 > maxPortsPerService) {
    ctx.fail(at, `port range ${show(text)} has ${end - start + 1} ports; at most ${maxPortsPerService} are supported`);
    return undefined;
  }
  return { start, end };
}
