import type { CommandSpec } from '../../cli/spec.ts';

export const completionCommand: CommandSpec = {
  name: 'completion',
  summary: 'Print a shell completion script (bash or zsh)',
  description:
    "Prints a completion script for bash or zsh.\n  bash: echo 'source <(devtool completion bash)' >> ~/.bashrc\n" +
    "  zsh:  echo 'source <(devtool completion zsh)' >> ~/.zshrc",
  args: [{ name: 'shell', required: true, description: '`bash` or `zsh`' }],
  load: async () => (await import('./run.ts')).runCompletion,
};
