/**
 * Peers are dev dependencies of bench/ only, installed with
 * `npm install --prefix bench`. They are loaded by name at run time, and
 * typed by the few members used here, so the repository type-checks without them.
 */
export async function loadPeer<Module>(specifier: string): Promise<Module> {
  try {
    return (await import(specifier)) as Module;
  } catch (cause) {
    throw new Error(`${specifier} is not installed: run npm install --prefix bench`, { cause });
  }
}
