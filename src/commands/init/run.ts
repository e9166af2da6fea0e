import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { MANIFEST_FILE } from '../../app/manifest-file.ts';
import { DevtoolError, UsageError } from '../../base/errors.ts';
import type { CommandHandler } from '../../cli/spec.ts';
import type { Factory } from '../../factory.ts';
import { inspectFolder, type Inspection } from '../../init/inspect.ts';
import { registryCopy } from '../../init/dev-image.ts';
import {
  appName,
  defaultAnswers,
  defaultService,
  deployMethods,
  describeMethod,
  nothingToSwap,
  proposedImage,
  proposeManifest,
  renderManifest,
  type Answers,
} from '../../init/propose.ts';
import { missingPatterns, renderStignore } from '../../init/ignore.ts';
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
  const publicImage = proposedImage(inspection, answers, name);
  const devImage = publicImage ? await imageCopy(f, publicImage, context) : undefined;
  const manifest = proposeManifest(inspection, answers, name, devImage);
  const text = renderManifest(manifest, summary(inspection));
  // What init writes must load: a guess that the loader rejects is a bug, caught here, not at deploy.
  loadManifestText(text, path, { cwd: f.cwd, env: {} });
  writeFileAtomic(path, text, 0o644);
  // An existing .stignore is the user's (its order and negations matter): kept as is, and what
  // it lacks of the proposal is said, not merged in.
  const ignorePath = join(dirname(path), '.stignore');
  const wroteIgnore = !existsSync(ignorePath);
  if (wroteIgnore) writeFileAtomic(ignorePath, renderStignore(inspection.ecosystems), 0o644);
  const lacking = wroteIgnore ? [] : missingPatterns(readText(ignorePath), inspection.ecosystems);

  const shown = relative(f.cwd, path) || path;
  const standalone = nothingToSwap(inspection, answers.deploy) ? ': nothing to swap, up creates it (autocreate)' : '';
  f.io.stdout.write(`✓ ${shown} created (${describeMethod(answers.deploy)}; dev container "${answers.service}" forwarding ${answers.port}${standalone})\n`);
  const shownIgnore = relative(f.cwd, ignorePath) || ignorePath;
  const found = inspection.ecosystems.length ? ` (for ${inspection.ecosystems.join(', ')})` : '';
  if (wroteIgnore) f.io.stdout.write(`✓ ${shownIgnore} created${found}: what 'devtool up' never synchronizes\n`);
  else if (lacking.length) f.io.stdout.write(`! ${shownIgnore} exists and is kept as it is; init would also ignore: ${lacking.join(' ')}\n`);
  if (publicImage && !devImage)
    f.io.stdout.write(`! dev container image ${publicImage} is a public image: if the cluster cannot pull it, set services.${answers.service}.image\n`);
  const target = [context ? `--context ${context}` : '', namespace ? `--namespace ${namespace}` : ''].filter(Boolean).join(' ');
  const flags = `${target ? ` ${target}` : ''}${file !== MANIFEST_FILE ? ` --file ${file}` : ''}`;
  // Nothing to build or deploy: `deploy` would do nothing, `up` is the next step.
  const deploys = manifest['build'] !== undefined || manifest['deploy'] !== undefined;
  f.io.stdout.write(deploys ? `  next: devtool deploy${flags}, then devtool up${flags}\n` : `  next: devtool up${flags}\n`);
};

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/** The context's copy of a public image (init/dev-image.ts); no context, no registry or no copy: none. */
async function imageCopy(f: Factory, image: string, context: string | undefined): Promise<string | undefined> {
  let registry: string | undefined;
  try {
    registry = (await f.contexts.select(context)).registry;
  } catch {
    return undefined; // init works without any context
  }
  return registryCopy(image, registry, f.env).catch(() => undefined);
}

async function ask(f: Factory, i: Inspection, name: string): Promise<Answers> {
  const methods = deployMethods(i);
  const chosen = await f.prompter.select(
    'How is this application deployed?',
    methods.map((m, n) => ({ name: describeMethod(m), value: String(n) })),
    NO_TTY,
    '0',
  );
  const deploy = methods[Number(chosen)] ?? methods[0]!;
  // The dev container's guess depends on the method: a Deployment of the chosen manifests.
  const guess = { ...defaultAnswers(i, name), deploy, service: defaultService(i, deploy, name) };
  const service = await f.prompter.input(
    'Which service do you want to develop?',
    NO_TTY,
    (v) => (v.trim() === '' || /^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(v.trim()) ? true : 'use letters, digits, ".", "_" and "-"'),
    guess.service,
  );
  const port = await f.prompter.input(
    'Which port does it listen on?',
    NO_TTY,
    (v) => (v.trim() === '' || (/^\d{1,5}$/.test(v.trim()) && Number(v) >= 1 && Number(v) <= 65535) ? true : 'a port number, 1-65535'),
    String(guess.port),
  );
  return {
    deploy,
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
