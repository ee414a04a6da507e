/** Whether a `Content-Type` names JSON: `application/json`, or a `+json` type such as `application/merge-patch+json`. */
export function isJsonMediaType(contentType: string | undefined): boolean {
  return /[/+]json\b/i.test(contentType ?? '');
}

/**
 * Whether every number in the JSON text `text` is exactly the number its
 * parsed double stands for (1.0, 1e0 and 1 are; 0.10000000000000000001,
 * 1.0000000000000001, 1e400 and 1e-400 are not). Parsing rounds a number to
 * the nearest double, so two bodies that differ only beyond its precision
 * would share one fingerprint; the canonical form writes each double as
 * its shortest decimal, which is the value compared here.
 * Text that is not JSON stops the scan without a verdict: the parser answers for it.
 */
export function numbersExact(text: string): boolean {
  for (let at = 0; at < text.length; ) {
    const char = text[at] as string;
    if (char === '"') {
      at = stringEnd(text, at);
    } else if (char === '-' || (char >= '0' && char <= '9')) {
      const end = numberEnd(text, at);
      if (!exact(text.slice(at, end))) return false;
      at = end;
    } else if (' \t\r\n[]{}:,truefalsn'.includes(char)) {
      at += 1;
    } else {
      return true;
    }
  }
  return true;
}

/** The index after the string that opens at `start`. */
function stringEnd(text: string, start: number): number {
  let at = start + 1;
  while (at < text.length && text[at] !== '"') at += text[at] === '\\' ? 2 : 1;
  return at + 1;
}

/** The index after the number token that starts at `start`. */
function numberEnd(text: string, start: number): number {
  let at = start + 1;
  while (at < text.length && '0123456789+-.eE'.includes(text[at] as string)) at += 1;
  return at;
}

function exact(token: string): boolean {
  const parsed = Number(token);
  if (!Number.isFinite(parsed)) return Number.isNaN(parsed);
  const written = String(parsed);
  // Most numbers are sent as the shortest decimal of their double, which is exact without comparing digits.
  return written === token || decimal(token) === decimal(written);
}

/**
 * A decimal written as its significant digits and the exponent of the last
 * one (`-12.50e1` → `-125e0`), zero as `0`; undefined for what is not a JSON
 * number, which the parser refuses.
 */
function decimal(written: string): string | undefined {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(written);
  if (match === null) return undefined;
  const [, sign, whole, fraction = '', exponent = '0'] = match;
  const digits = `${whole}${fraction}`.replace(/^0+/, '');
  if (digits === '') return '0';
  const significant = digits.replace(/0+$/, '');
  const scale = BigInt(exponent) - BigInt(fraction.length) + BigInt(digits.length - significant.length);
  return `${sign}${significant}e${scale}`;
}
