/** Text helpers with no dependency: the ground floor (src/base imports nothing else from src/). */

/** A message on one line: each run of line breaks (LF, CR), with the blanks around it, becomes one space. */
export function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, ' ').trim();
}
