/**
 * Splits the string form of `command`, `entrypoint` and `healthcheck.test` into words the way
 * Docker Compose does (go-shellwords): whitespace separates words; single quotes keep text as is;
 * double quotes keep spaces and understand \" \\ \$ and \`; a backslash outside quotes escapes the
 * next character. No variable expansion and no globbing: the words reach the container unchanged.
 */
export class ShellwordsError extends Error {}

export function splitShellwords(text: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
      i++;
      continue;
    }
    inWord = true;
    if (c === '\\') {
      if (i + 1 < text.length) word += text[i + 1];
      i += 2;
      continue;
    }
    if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) throw new ShellwordsError('unterminated single quote');
      word += text.slice(i + 1, end);
      i = end + 1;
      continue;
    }
    if (c === '"') {
      let j = i + 1;
      for (; j < text.length && text[j] !== '"'; j++) {
        if (text[j] === '\\' && j + 1 < text.length && '"\\$`'.includes(text[j + 1]!)) j++;
        word += text[j];
      }
      if (j >= text.length) throw new ShellwordsError('unterminated double quote');
      i = j + 1;
      continue;
    }
    word += c;
    i++;
  }
  if (inWord) words.push(word);
  return words;
}
