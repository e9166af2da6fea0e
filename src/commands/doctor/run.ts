import { MANIFEST_FILE } from '../../app/folder.ts';
import type { CommandHandler } from '../../cli/spec.ts';
import { Progress } from '../../deploy/progress.ts';
import { writeDoctorFile } from '../../doctor/doctor.ts';

export const runDoctor: CommandHandler = async (f, inv) => {
  const progress = new Progress(f.io.stderr, f.now, f.log);
  const r = await writeDoctorFile(f, {
    file: inv.string('file') ?? MANIFEST_FILE,
    devName: inv.args[0],
    namespace: inv.string('namespace'),
    step: (m) => progress.step(m),
  });
  for (const note of r.notes) progress.warn(`not collected: ${note}`);
  progress.done(`doctor file written with ${r.entries.length} files, secrets redacted: ${r.path}; attach it to your issue`);
  // The path alone on stdout, for scripts.
  f.io.stdout.write(`${r.path}\n`);
};
