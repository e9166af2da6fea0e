// Where one edit's sync time goes, stage by stage, from both Syncthings' own events (GET
// /rest/events, long-polled with `since`). Both ends run on this machine (the node is local), so
// their event times and the bench's clock line up. Used by dev-sync.mjs.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const EVENTS = 'StateChanged,LocalChangeDetected,LocalIndexUpdated,RemoteIndexUpdated,ItemStarted,ItemFinished';

/** Event poller as a script: node -e, prints one JSON event a line (for the container's end). */
const pollerScript = (base, apiKey) =>
  `let since=0;(async()=>{for(;;){try{const r=await fetch('${base}/rest/events?since='+since+'&timeout=60&events=${EVENTS}',` +
  `{headers:{'X-API-Key':'${apiKey}'}});for(const e of await r.json()){since=e.id;console.log(JSON.stringify(e))}}` +
  `catch{await new Promise(r=>setTimeout(r,100))}}})()`;

/** The dev environment's state folder under DEVTOOL_HOME: the one holding sync-keys.json. */
function findStateDir(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isFile() && e.name === 'sync-keys.json') return dir;
    if (e.isDirectory()) {
      const found = findStateDir(join(dir, e.name));
      if (found) return found;
    }
  }
  return undefined;
}

/** One end's events, as { type, at (epoch ms), data }. */
class EndEvents {
  events = [];
  add(e) {
    this.events.push({ type: e.type, at: Date.parse(e.time), data: e.data ?? {} });
  }
  /** The first event of `type` at or after `since` for which `match` holds. */
  event(type, since, match = () => true) {
    return this.events.find((e) => e.type === type && e.at >= since && match(e.data));
  }
  first(type, since, match) {
    return this.event(type, since, match)?.at;
  }
}

/** Starts following both ends' events; `stop()` ends the pollers. */
export function followSyncEvents({ devtoolHome, kubectlArgs, pod }) {
  const state = findStateDir(devtoolHome);
  if (!state) throw new Error(`no sync-keys.json under ${devtoolHome}`);
  const keys = JSON.parse(readFileSync(join(state, 'sync-keys.json'), 'utf8'));
  const { port } = JSON.parse(readFileSync(join(state, 'syncthing-address.json'), 'utf8'));
  const local = new EndEvents();
  const remote = new EndEvents();
  const localPoller = spawn(process.execPath, ['-e', pollerScript(`http://127.0.0.1:${port}`, keys.local.apiKey ?? keys.apiKey)]);
  const remotePoller = spawn('kubectl', [
    ...kubectlArgs,
    'exec',
    '-i',
    pod,
    '--',
    'node',
    '-e',
    pollerScript('http://127.0.0.1:8384', keys.remote.apiKey ?? keys.apiKey),
  ]);
  createInterface({ input: localPoller.stdout }).on('line', (l) => local.add(JSON.parse(l)));
  createInterface({ input: remotePoller.stdout }).on('line', (l) => remote.add(JSON.parse(l)));
  return {
    local,
    remote,
    stop() {
      localPoller.kill();
      remotePoller.kill();
    },
  };
}

/**
 * The stages of one edit of `path`, written at `written` (epoch ms) on end `from` and visible on
 * end `to` at `visible`: ms from the write to each event, in order. A stage whose event did not
 * come is null.
 */
export function editStages(from, to, path, written, visible) {
  const scanRequested = from.first('StateChanged', written, (d) => d.to === 'scanning');
  const changeDetected = from.first('LocalChangeDetected', written, (d) => d.path === path);
  const update = from.event('LocalIndexUpdated', written, (d) => (d.filenames ?? []).includes(path));
  const indexUpdated = update?.at;
  // The index update that carries it: the sender's sequence reached the update's.
  const indexReceived = update && to.first('RemoteIndexUpdated', update.at, (d) => d.sequence >= update.data.sequence);
  const pullStarted = to.first('ItemStarted', written, (d) => d.item === path);
  const finished = to.event('ItemFinished', written, (d) => d.item === path);
  const pullFinished = finished?.at;
  const since = (t) => (t === undefined ? null : t - written);
  return {
    scanRequested: since(scanRequested),
    changeDetected: since(changeDetected),
    indexUpdated: since(indexUpdated),
    indexReceived: since(indexReceived),
    pullStarted: since(pullStarted),
    pullFinished: since(pullFinished),
    visible: visible - written,
    // Syncthing's reason when that pull failed (it retries later).
    ...(finished?.data.error ? { pullError: finished.data.error } : {}),
  };
}

/** Per stage, the median time since the write over all edits, and the median step from the stage before. */
export function stageMedians(all) {
  const median = (xs) => {
    const s = xs.filter((x) => x !== null).sort((a, b) => a - b);
    return s.length ? Math.round(s[Math.floor(s.length / 2)]) : null;
  };
  const names = Object.keys(all[0] ?? {}).filter((n) => n !== 'pullError');
  const out = {};
  names.forEach((name, i) => {
    const prev = names[i - 1];
    out[name] = {
      sinceWrite: median(all.map((s) => s[name])),
      step: median(all.map((s) => (s[name] === null ? null : prev === undefined ? s[name] : s[prev] === null ? null : s[name] - s[prev]))),
    };
  });
  return out;
}
