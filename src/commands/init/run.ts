import { existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { MANIFEST_FILE } from '../../app/folder.ts';
import { DevtoolError, UsageError } from '../../base/errors.ts';
import type { CommandHandler } from '../../cli/spec.ts';
import type { Factory } from '../../factory.ts';
import { inspectFolder, type Inspection } from '../../init/inspect.ts';
import { appName, defaultAnswers, deployMethods, describeMethod, proposeManifest, renderManifest, stignore, type Answers } from '../../init/propose.ts';
import { writeFileAtomic } from '../../io/atomic-file.ts';
import { checkNamespaceName } from '../../kube/naming.ts';
import { loadManifestText } from '../../manifest/load.ts';
import type { initOptions } from './spec.ts';

const NO_TTY = "'devtool init' asks questions and there is no terminal: run 'devtool init -v1' to write the guessed manifest without questions";

export const runInit: CommandHandler<typeof initOptions> = async (f, inv) => {
  const file = inv.opts.file;
  const path = resolve(f.cwd, file);
  const v1 = inv.opts.v1;
  // Checked before any question, so nothing is asked for a file that cannot be written.
  if (existsSync(path) && !inv.opts.replace) throw new DevtoolError(`${file} already exists: pass --replace to overwrite it`);
  if (!v1 && !f.interactive) throw new UsageError(NO_TTY);
  const namespace = inv.opts.namespace !== undefined ? checkNamespaceName(inv.opts.namespace) : undefined;
  const context = await checkContext(f, inv.opts.context);

  const inspection = inspectFolder(dirname(path));
  const name = appName(inspection);
  const answers = v1 ? defaultAnswers(inspection, name) : await ask(f, inspection, name);
  const manifest = proposeManifest(inspection, answers, name);
  const text = renderManifest(manifest, summary(inspection));
  // What init writes must load: a guess that the loader rejects is a bug, caught here, not at deploy.
  loadManifestText(text, path, { cwd: f.cwd, env: {} });
  writeFileAtomic(path, text, 0o644);
  const ignorePath = join(dirname(path), '.stignore');
  const wroteIgnore = !existsSync(ignorePath);
  if (wroteIgnore) writeFileAtomic(ignorePath, stignore(inspection), 0o644);

  const shown = relative(f.cwd, path) || path;
  f.io.stdout.write(`✓ ${shown} created (${describeMethod(answers.deploy)}; dev container "${answers.service}" forwarding ${answers.port})\n`);
  if (wroteIgnore) f.io.stdout.write(`✓ ${relative(f.cwd, ignorePath) || ignorePath} created: files 'devtool up' never synchronizes\n`);
  const target = [context ? `--context ${context}` : '', namespace ? `--namespace ${namespace}` : ''].filter(Boolean).join(' ');
  f.io.stdout.write(`  next: devtool deploy${target ? ` ${target}` : ''}${file !== MANIFEST_FILE ? ` --file ${file}` : ''}, then devtool up\n`);
};

async function ask(f: Factory, i: Inspection, name: string): Promise<Answers> {
  const guess = defaultAnswers(i, name);
  const methods = deployMethods(i);
  const chosen = await f.prompter.select(
    'How is this application deployed?',
    methods.map((m, n) => ({ name: describeMethod(m), value: String(n) })),
    NO_TTY,
    '0',
  );
  const service = await f.prompter.input(`Which service do you want to develop? (Enter for "${guess.service}")`, NO_TTY, (v) =>
    v.trim() === '' || /^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(v.trim()) ? true : 'use letters, digits, ".", "_" and "-"',
  );
  const port = await f.prompter.input(`Which port does it listen on? (Enter for ${guess.port})`, NO_TTY, (v) =>
    v.trim() === '' || (/^\d{1,5}$/.test(v.trim()) && Number(v) >= 1 && Number(v) <= 65535) ? true : 'a port number, 1-65535',
  );
  return {
    deploy: methods[Number(chosen)] ?? guess.deploy,
    service: service.trim() || guess.service,
    port: port.trim() ? Number(port.trim()) : guess.port,
  };
}

/** --context must name a known context: the manifest's next step would fail on a typo otherwise. */
async function checkContext(f: Factory, name: string | undefined): Promise<string | undefined> {
  if (name === undefined) return undefined;
  const known = (await f.contexts.list()).map((c) => c.name);
  if (!known.includes(name)) throw new DevtoolError(`unknown context "${name}": 'devtool context list' shows the contexts`);
  return name;
}

function summary(i: Inspection): string {
  const found = [
    i.language ? `${i.language} code` : '',
    i.dockerfiles.length ? `${i.dockerfiles.length} Dockerfile(s)` : '',
    i.composeFiles.length ? `Compose ${i.composeFiles.join(', ')}` : '',
    i.manifestDirs.length ? `Kubernetes manifests in ${i.manifestDirs.join(', ')}` : '',
    i.charts.length ? `Helm chart(s) ${i.charts.join(', ')}` : '',
  ].filter(Boolean);
  return `written by 'devtool init' from what it found: ${found.length ? found.join('; ') : 'nothing specific'}. Review and edit.`;
}
