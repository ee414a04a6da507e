/** `3d4h`, `2h5m`, `4m10s`, `9s`: the two largest units are enough to read an age. */
export function ageText(seconds: number): string {
  const units: readonly (readonly [string, number])[] = [
    ['d', 86_400],
    ['h', 3_600],
    ['m', 60],
    ['s', 1],
  ];
  let rest = Math.max(0, Math.floor(seconds));
  const parts: string[] = [];
  for (const [unit, size] of units) {
    if (parts.length === 2) break;
    const count = Math.floor(rest / size);
    rest -= count * size;
    if (count > 0 || parts.length > 0 || size === 1) parts.push(`${count}${unit}`);
  }
  return parts.join('');
}
