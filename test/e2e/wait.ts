/** Polls cond every 200 ms until it holds; throws naming `what` after `ms`. */
export async function waitFor(what: string, cond: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms / 1000}s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
