const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const MONTH = MONTHS.join('|');
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';

// RFC 9110 §5.6.7: senders use the first form; recipients must also accept the two obsolete ones.
const IMF_FIXDATE = new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\\d{2}) (${MONTH}) (\\d{4}) ${TIME} GMT$`);
const RFC_850 = new RegExp(
  `^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (\\d{2})-(${MONTH})-(\\d{2}) ${TIME} GMT$`,
);
const ASCTIME = new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (${MONTH}) ( \\d|\\d{2}) ${TIME} (\\d{4})$`);

/** An HTTP-date in any of its three forms, as epoch milliseconds; undefined when it is not one. */
export function parseHttpDate(value: string, now: number = Date.now()): number | undefined {
  let m = IMF_FIXDATE.exec(value);
  if (m !== null) return utc(Number(m[3]), m[2], m[1], m[4], m[5], m[6]);
  m = RFC_850.exec(value);
  if (m !== null) return utc(fullYear(Number(m[3]), now), m[2], m[1], m[4], m[5], m[6]);
  m = ASCTIME.exec(value);
  if (m !== null) return utc(Number(m[6]), m[1], m[2], m[3], m[4], m[5]);
  return undefined;
}

/** RFC 9110: a two-digit year more than 50 years ahead means the most recent past year with those digits. */
function fullYear(twoDigits: number, now: number): number {
  const current = new Date(now).getUTCFullYear();
  const year = current - (current % 100) + twoDigits;
  return year > current + 50 ? year - 100 : year;
}

function utc(
  year: number,
  month: string | undefined,
  day: string | undefined,
  hh: string | undefined,
  mm: string | undefined,
  ss: string | undefined,
): number | undefined {
  const monthIndex = MONTHS.indexOf(month ?? '');
  const [d, h, mi, s] = [day, hh, mm, ss].map(Number) as [number, number, number, number];
  // A leap second (60) is in the grammar; it carries into the next minute.
  if (monthIndex < 0 || d < 1 || h > 23 || mi > 59 || s > 60) return undefined;
  // setUTCFullYear, unlike Date.UTC, keeps years below 100 as written.
  const date = new Date(0);
  date.setUTCFullYear(year, monthIndex, d);
  // It rolls 31 February over into March; that is not a date.
  if (date.getUTCDate() !== d) return undefined;
  return date.setUTCHours(h, mi, s, 0);
}
