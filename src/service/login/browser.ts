/**
 * Whether a login may open a browser here, and opening it. The peers' users were stuck when a
 * login started a browser in CI, over SSH or in WSL (lessons-from-peers): here a browser is opened
 * only on a terminal, outside CI, on a desktop this process can reach; everywhere else the login
 * uses the device code, which works from any device. `BROWSER=none` forces the device code.
 */

export interface BrowserHost {
  readonly env: Readonly<NodeJS.ProcessEnv>;
  readonly platform: NodeJS.Platform;
  /** Whether stdin and stdout are a terminal (someone is there to use the browser). */
  readonly interactive: boolean;
}

/** Why a browser will not be opened, or undefined when it will. */
export function browserUnavailable({ env, platform, interactive }: BrowserHost): string | undefined {
  const set = (name: string) => (env[name] ?? '') !== '' && env[name] !== 'false' && env[name] !== '0';
  if (!interactive) return 'no terminal';
  if (set('CI')) return 'running in CI';
  if (['none', 'false', '0'].includes((env.BROWSER ?? '').toLowerCase())) return 'BROWSER=none';
  const desktop = set('DISPLAY') || set('WAYLAND_DISPLAY');
  // Over SSH, a browser would open on the remote machine's screen, if it has one: not the user's.
  if ((set('SSH_CONNECTION') || set('SSH_TTY')) && !desktop) return 'an SSH session';
  if (platform === 'darwin' || platform === 'win32') return undefined;
  if (set('WSL_DISTRO_NAME')) return undefined; // `open` hands the URL to the Windows browser
  return desktop ? undefined : 'no desktop (neither DISPLAY nor WAYLAND_DISPLAY is set)';
}

/** Opens `url` in the user's browser; false when that failed (the caller falls back). */
export async function openInBrowser(url: string): Promise<boolean> {
  try {
    const { default: open } = await import('open');
    const child = await open(url);
    return await new Promise<boolean>((resolve) => {
      child.once('error', () => resolve(false));
      child.once('spawn', () => resolve(true));
      // `open` may hand back a child that has spawned already.
      if (child.pid !== undefined) resolve(true);
    });
  } catch {
    return false;
  }
}
