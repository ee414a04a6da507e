/** Waits until `condition` holds; a generous deadline turns a hang into a failure. */
export async function until(
  condition: () => boolean | Promise<boolean>,
  what: string,
  withinMs = 45_000,
): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting until ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
