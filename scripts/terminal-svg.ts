// A terminal session as an SVG picture: the commands typed and what they printed, in a window with
// a title bar. Text stays text (small files, searchable, sharp at any zoom); colours are dropped.

/** One step of a session: the command line shown after the prompt, and its output. */
export interface SessionStep {
  command: string;
  output: string;
}

const CHAR_WIDTH = 7.8;
const LINE_HEIGHT = 18;
const PADDING = 14;
const TITLE_BAR = 28;
const MAX_COLUMNS = 110;
const STYLE = [
  'text{font:13px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;fill:#d6dde6;white-space:pre}',
  '.typed{fill:#8fd694}',
  '.title{fill:#9aa4b1;font-size:12px}',
].join('');
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;?]*[A-Za-z]`, 'g');

const escapeXml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The lines a step shows: the prompt and command, then its output without colour codes or tabs. */
export function sessionLines(steps: readonly SessionStep[]): { text: string; typed: boolean }[] {
  return steps.flatMap((step) => {
    const output = step.output.replace(ANSI, '').replace(/\r/g, '').replace(/\t/g, '    ').replace(/\n+$/, '');
    return [{ text: `$ ${step.command}`, typed: true }, ...(output === '' ? [] : output.split('\n')).map((text) => ({ text, typed: false }))];
  });
}

/** The SVG of a session; lines longer than the window end in an ellipsis. */
export function terminalSvg(title: string, steps: readonly SessionStep[]): string {
  const lines = sessionLines(steps).map((l) => ({ ...l, text: l.text.length > MAX_COLUMNS ? `${l.text.slice(0, MAX_COLUMNS - 1)}…` : l.text }));
  const columns = Math.max(60, ...lines.map((l) => l.text.length));
  const width = Math.ceil(columns * CHAR_WIDTH + 2 * PADDING);
  const height = TITLE_BAR + PADDING + lines.length * LINE_HEIGHT + PADDING;
  const text = lines
    .map((l, i) => {
      const y = TITLE_BAR + PADDING + (i + 1) * LINE_HEIGHT - 5;
      return `<text x="${PADDING}" y="${y}"${l.typed ? ' class="typed"' : ''}>${escapeXml(l.text)}</text>`;
    })
    .join('\n');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img">
<title>${escapeXml(title)}</title>
<style>${STYLE}</style>
<rect width="${width}" height="${height}" rx="8" fill="#1e2329"/>
<circle cx="18" cy="14" r="5" fill="#ff5f57"/><circle cx="36" cy="14" r="5" fill="#febc2e"/><circle cx="54" cy="14" r="5" fill="#28c840"/>
<text x="${width / 2}" y="18" class="title" text-anchor="middle">${escapeXml(title)}</text>
${text}
</svg>
`;
}
