/**
 * The `.stignore` `init` proposes: pure, from the ecosystems found at the project's top (one
 * project may mix several: a Go API with a Node front end), tested against golden files
 * (testdata/stignore/). Syncthing's syntax (docs/sync.md, "Big trees"): a pattern without "/"
 * matches that name at any depth, and everything below a matched folder; a leading "/" anchors it
 * to the synced folder's top; a trailing "/" would match nothing. No globs where a plain name does:
 * plain names are also what both watchers skip (watcher.ts, the agent's rescanner), so a
 * `node_modules` of 60,000 files costs no inotify watch and no event on either end.
 *
 * Downloaded packages and build output get `(?d)`: regenerated on each end, they may be deleted
 * when they are all that keeps a folder deleted on the other end from going (without it, deleting
 * `packages/web/` here leaves `packages/web/node_modules` in the container, and Syncthing reports
 * the folder as failing to delete). The common lines do not: `.git` and `.env` are never deleted
 * for a deletion that came from the other end.
 */
import type { Ecosystem } from './inspect.ts';

/** Never synced whatever the ecosystem: history, devtool's state, local secrets, editor swap files. */
const COMMON: readonly string[] = ['.git', '.devtool', '.env', '*.swp', '(?d).DS_Store'];

/** Where each ecosystem puts downloaded packages and build output, in the project. */
export const ECOSYSTEM_IGNORES: Readonly<Record<Ecosystem, { readonly why: string; readonly names: readonly string[] }>> = {
  npm: { why: 'Node (package.json): packages and build output', names: ['node_modules', 'dist', '.next', 'coverage'] },
  python: { why: 'Python: virtual environments and caches', names: ['.venv', 'venv', '__pycache__', '*.pyc', '.pytest_cache', '.mypy_cache', '.tox'] },
  // Not vendor/: Go's is source checked in (`go build -mod=vendor` needs it in the container).
  go: { why: "Go: binaries built for this machine's system", names: ['/bin'] },
  maven: { why: 'Maven (pom.xml): build output of each module', names: ['target'] },
  gradle: { why: 'Gradle: build output of each project and its caches', names: ['build', '.gradle'] },
  cargo: { why: 'Rust (Cargo.toml): build output', names: ['target'] },
  bundler: { why: 'Ruby (Gemfile): installed gems, logs and temporary files', names: ['/vendor/bundle', '/log', '/tmp'] },
  composer: { why: 'PHP (composer.json): installed packages', names: ['/vendor'] },
  dotnet: { why: '.NET: build output of each project', names: ['bin', 'obj'] },
};

/** The patterns for these ecosystems, common ones first; a name two ecosystems share appears once. */
export function ignorePatterns(ecosystems: readonly Ecosystem[]): string[] {
  const out = [...COMMON];
  for (const e of ecosystems) for (const name of ECOSYSTEM_IGNORES[e].names) if (!out.includes(`(?d)${name}`)) out.push(`(?d)${name}`);
  return out;
}

/** The file's text: each group under a comment saying why. */
export function renderStignore(ecosystems: readonly Ecosystem[]): string {
  const lines = ['// Never synchronized by devtool up, either way (one pattern per line; docs/sync.md, "Big trees").', ...COMMON];
  const seen = new Set(COMMON);
  for (const e of ecosystems) {
    const names = ECOSYSTEM_IGNORES[e].names.map((n) => `(?d)${n}`).filter((p) => !seen.has(p));
    if (!names.length) continue;
    for (const p of names) seen.add(p);
    lines.push(`// ${ECOSYSTEM_IGNORES[e].why}`, ...names);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * The proposed patterns an existing `.stignore` lacks (init never rewrites one: it may hold the
 * user's own negations and includes, whose order matters). Compared without Syncthing's `(?d)`
 * and `(?i)` prefixes, so `node_modules` there counts as `(?d)node_modules`.
 */
export function missingPatterns(existing: string, ecosystems: readonly Ecosystem[]): string[] {
  const bare = (l: string) => l.trim().replace(/^(\(\?[di]\))+/, '');
  const have = new Set(existing.split('\n').map(bare));
  return ignorePatterns(ecosystems).filter((p) => !have.has(bare(p)));
}
