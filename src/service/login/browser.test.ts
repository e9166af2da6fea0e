import { test } from 'node:test';
import assert from 'node:assert/strict';
import { browserUnavailable } from './browser.ts';

const linuxDesktop = { env: { DISPLAY: ':0' }, platform: 'linux' as const, interactive: true };

test('a browser is opened on a desktop terminal: Linux with a display, macOS, Windows, WSL', () => {
  assert.equal(browserUnavailable(linuxDesktop), undefined);
  assert.equal(browserUnavailable({ env: { WAYLAND_DISPLAY: 'wayland-0' }, platform: 'linux', interactive: true }), undefined);
  assert.equal(browserUnavailable({ env: {}, platform: 'darwin', interactive: true }), undefined);
  assert.equal(browserUnavailable({ env: {}, platform: 'win32', interactive: true }), undefined);
  assert.equal(browserUnavailable({ env: { WSL_DISTRO_NAME: 'Debian' }, platform: 'linux', interactive: true }), undefined);
});

test('never in CI, without a terminal, over SSH without a forwarded display, on a bare server, or with BROWSER=none', () => {
  assert.equal(browserUnavailable({ ...linuxDesktop, env: { DISPLAY: ':0', CI: 'true' } }), 'running in CI');
  assert.equal(browserUnavailable({ ...linuxDesktop, interactive: false }), 'no terminal');
  assert.equal(browserUnavailable({ env: { SSH_CONNECTION: '10.0.0.1 5 10.0.0.2 22' }, platform: 'darwin', interactive: true }), 'an SSH session');
  assert.equal(browserUnavailable({ env: {}, platform: 'linux', interactive: true }), 'no desktop (neither DISPLAY nor WAYLAND_DISPLAY is set)');
  assert.equal(browserUnavailable({ ...linuxDesktop, env: { DISPLAY: ':0', BROWSER: 'none' } }), 'BROWSER=none');
  assert.equal(browserUnavailable({ ...linuxDesktop, env: { DISPLAY: ':0', CI: 'false' } }), undefined, 'CI=false is not CI');
  assert.equal(browserUnavailable({ ...linuxDesktop, env: { DISPLAY: ':0', SSH_TTY: '/dev/pts/1' } }), undefined, 'X forwarded over SSH');
});
