/** A promise the test opens: holds work in flight for as long as the test needs, however slow the machine. */
export interface Gate {
  readonly opened: Promise<void>;
  open(): void;
}

export function gate(): Gate {
  let open = (): void => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open: () => open() };
}
