/** Aborts `target` when any source aborts, with that source's reason. Returns the unlink. */
export function linkAbort(target: AbortController, sources: readonly AbortSignal[]): () => void {
  const unlinks = sources.map((source) => {
    if (source.aborted) {
      target.abort(source.reason);
      return () => {};
    }
    const forward = (): void => target.abort(source.reason);
    source.addEventListener('abort', forward, { once: true });
    return () => source.removeEventListener('abort', forward);
  });
  return () => unlinks.forEach((unlink) => unlink());
}
