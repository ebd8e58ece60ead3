/** What failed: the error a function threw or a promise rejected with, for assertions on it. */

/** What `fn` threw, or undefined when it returned. */
export function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  return undefined;
}

/** What `p` rejects with; rejects itself when `p` resolves instead. */
export function rejection<E = unknown>(p: Promise<unknown>): Promise<E> {
  return p.then(
    (v) => {
      throw new Error(`expected a rejection, found a value: ${String(v)}`);
    },
    (e: E) => e,
  );
}
