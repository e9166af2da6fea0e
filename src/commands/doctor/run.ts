import type { CommandHandler } from '../../cli/spec.ts';
import { Progress } from '../../deploy/progress.ts';
import { writeDoctorFile } from '../../doctor/doctor.ts';
import type { devContainerOptions } from '../shared.ts';

export const runDoctor: CommandHandler<typeof devContainerOptions> = async (f, inv) => {
  const progress = new Progress(f.io.stderr, f.now, f.log);
  const r = await writeDoctorFile(f, {
    file: inv.given.file,
    devName: inv.args[0],
    namespace: inv.opts.namespace,
    step: (m) => progress.step(m),
  });
  for (const note of r.notes) progress.warn(`not collected: ${note}`);
  progress.done(`doctor file written with ${r.entries.length} files, secrets redacted: ${r.path}; attach it to your issue`);
  // The path alone on stdout, for scripts.
  f.io.stdout.write(`${r.path}\n`);
};
