/**
 * `devtool build [image...]`: builds and pushes the images of the manifest (image/sources.ts says
 * which), always (a deploy is what skips images already pushed). Progress goes to stderr; the
 * pushed references go to stdout, one per line.
 */
import { UsageError } from '../../base/errors.ts';
import type { CommandHandler } from '../../cli/spec.ts';
import { buildImages } from '../../image/build-images.ts';
import { parseCliBuildOptions } from '../../image/options.ts';
import { withCliOptions } from '../../image/plan.ts';
import { buildSetup } from '../../image/select.ts';
import { buildSources } from '../../image/sources.ts';
import { Progress } from '../../deploy/progress.ts';
import { deploySecrets } from '../stored-secrets.ts';
import type { buildOptions } from './spec.ts';

export const runBuild: CommandHandler<typeof buildOptions> = async (f, inv) => {
  const cli = parseCliBuildOptions(
    { noCache: inv.opts.noCache, secrets: inv.opts.secret, exportCache: inv.opts.exportCache, cacheFrom: inv.opts.cacheFrom },
    f.cwd,
  );
  const context = await f.contexts.select(inv.opts.context);
  const secrets = deploySecrets(f, context, 'values');
  const sources = await buildSources(f.cwd, inv.opts.file, inv.args, f.env, secrets.stored).catch((err: unknown) => {
    throw secrets.scrub(err);
  });
  const specs = sources.specs.map((s) => withCliOptions(s, cli));
  if (cli.exportCache !== undefined && specs.length > 1) {
    throw new UsageError(
      `--export-cache names one image reference, and ${specs.length} images would be built (${specs.map((s) => s.name).join(', ')}): build one ` +
        `image, or set export_cache per image in the manifest`,
    );
  }
  const progress = new Progress(f.io.stderr, f.now, f.log, secrets.scrubText);
  for (const w of sources.warnings) progress.warn(w);
  const outcomes = await buildImages(specs, {
    mode: 'always',
    ...buildSetup(context, f.env, f.cwd),
    repositoryPrefix: sources.repositoryPrefix,
    progress,
  }).catch((err: unknown) => {
    throw secrets.scrub(err);
  });
  for (const o of outcomes) f.io.stdout.write(`${o.image}\n`);
};
