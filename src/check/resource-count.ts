/**
 * How many resources a count URL's JSON lists: the length of a top-level
 * array, or of the first array-valued member of a top-level object (so
 * `{"orders": [...], "next": null}` counts the orders). Undefined when neither
 * exists. Only the page the URL returns is counted, so it should filter
 * rather than paginate.
 */
export function countResources(document: unknown): number | undefined {
  if (Array.isArray(document)) return document.length;
  if (typeof document !== 'object' || document === null) return undefined;
  const list = Object.values(document).find((value) => Array.isArray(value)) as unknown[] | undefined;
  return list?.length;
}
