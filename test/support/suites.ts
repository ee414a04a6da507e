/**
 * What a run covers beyond `npm test`'s default, from the environment.
 * RETRYSAFE_SUITES=all: the suites `npm test` leaves to `.ci/run` for time.
 * RETRYSAFE_ADAPTERS=fastify,koa: only the frameworks named (exact names), for
 * `.ci/run`'s pass through every data layer, where the data layer is what
 * varies and one framework is enough.
 */
export const allSuites = process.env.RETRYSAFE_SUITES === 'all';

const named = (process.env.RETRYSAFE_ADAPTERS ?? '')
  .split(',')
  .map((name) => name.trim())
  .filter((name) => name !== '');

/** `frameworks`, or those RETRYSAFE_ADAPTERS names; an unknown name fails the run rather than selecting nothing. */
export function selectedFrameworks<T extends { readonly name: string }>(frameworks: readonly T[]): readonly T[] {
  if (named.length === 0) return frameworks;
  const unknown = named.filter((name) => !frameworks.some((framework) => framework.name === name));
  if (unknown.length > 0)
    throw new Error(
      `RETRYSAFE_ADAPTERS: no framework ${unknown.join(', ')}; known: ${frameworks.map((f) => f.name).join(', ')}.`,
    );
  return frameworks.filter((framework) => named.includes(framework.name));
}
