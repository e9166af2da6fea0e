/**
 * Interactive prompts, only on a terminal. With no TTY a prompt fails at once with a message that
 * names the flag or argument to pass instead, so nothing ever waits for input in CI.
 * @inquirer/prompts is loaded only when a prompt is really shown.
 */
import { NeedsInputError } from '../base/errors.ts';

export interface Choice {
  name: string;
  value: string;
  description?: string;
}

export interface Prompter {
  /** `instead` says what to pass when there is no terminal, e.g. "pass the context: devtool context use <URL_OR_CLUSTER_CONTEXT>". */
  select(message: string, choices: readonly Choice[], instead: string, initial?: string): Promise<string>;
  /**
   * `initial` is what Enter answers: the prompt says so ("(Enter for 4000)") until it is answered,
   * then shows the answer alone.
   */
  input(message: string, instead: string, validate?: (value: string) => string | true, initial?: string): Promise<string>;
  confirm(message: string, instead: string, initial?: boolean): Promise<boolean>;
}

export class TerminalPrompter implements Prompter {
  constructor(private readonly interactive: boolean) {}

  async select(message: string, choices: readonly Choice[], instead: string, initial?: string): Promise<string> {
    const { select } = await this.inquirer(instead);
    return select({ message, choices: [...choices], ...(initial !== undefined ? { default: initial } : {}) });
  }

  async input(message: string, instead: string, validate?: (value: string) => string | true, initial?: string): Promise<string> {
    const { input } = await this.inquirer(instead);
    return input({
      message,
      ...(validate ? { validate } : {}),
      ...(initial !== undefined ? { default: initial, theme: { style: { defaultAnswer: (text: string) => `(Enter for ${text})` } } } : {}),
    });
  }

  async confirm(message: string, instead: string, initial = false): Promise<boolean> {
    const { confirm } = await this.inquirer(instead);
    return confirm({ message, default: initial });
  }

  private async inquirer(instead: string) {
    if (!this.interactive) throw new NeedsInputError(`no terminal to prompt on: ${instead}`);
    return import('@inquirer/prompts');
  }
}
