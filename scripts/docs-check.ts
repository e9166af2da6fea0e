// The docs check of `npm run lint`: in every Markdown file and every code comment, the repository
// paths cited exist, nothing cites what a reader of the repository cannot open, no comment quotes a
// dated figure, and no doc outgrows its size. The rules, and what counts as a cited path:
// scripts/docs-check/rules.ts. Reads the files git lists (tracked, or new and not ignored).
//   node --import tsx scripts/docs-check.ts    prints one line per finding; exit code 1 if any
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { commentSyntax } from './docs-check/comments.ts';
import { checkFile, type Finding, ignoredFolderNames, PathIndex } from './docs-check/rules.ts';

process.chdir(fileURLToPath(new URL('..', import.meta.url)));

const paths = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
  .split('\0')
  .filter((p) => p !== '' && existsSync(p) && statSync(p).isFile());
// Folders of what tools make: those the .gitignore names (dist/ also before a build) and any other
// top-level folder git ignores now.
const ignoredNow = execFileSync('git', ['ls-files', '-z', '--others', '--ignored', '--exclude-standard', '--directory'], { encoding: 'utf8' })
  .split('\0')
  .filter((p) => /^[^/]+\/$/.test(p))
  .map((p) => p.slice(0, -1));
const index = new PathIndex(paths, [...ignoredFolderNames(readFileSync('.gitignore', 'utf8')), ...ignoredNow]);

// Generated code keeps the comments of what it was generated from.
const findings: Finding[] = [];
for (const path of paths) {
  if (path.includes('.generated.')) continue;
  const bytes = readFileSync(path);
  if (bytes.subarray(0, 8000).includes(0)) continue;
  const text = bytes.toString('utf8');
  if (!path.endsWith('.md') && commentSyntax(path, text) === 'none') continue;
  findings.push(...checkFile(path, text, index));
}

for (const f of findings) console.log(`${f.path}:${f.line}: ${f.message}`);
if (findings.length > 0) {
  console.log(`docs check: ${findings.length} findings in ${new Set(findings.map((f) => f.path)).size} files (rules: scripts/docs-check/rules.ts)`);
  process.exit(1);
}
