/**
 * A schedule's five-field cron expression in words: "every weekday at 09:00", "every hour at :30",
 * "on the 1st of every month at 06:00". The common shapes only; anything else (steps over hours,
 * both a day of the month and a weekday, `L`, `#`) answers null and the page shows the expression.
 */
export function cadence(cron: string): string | null {
  const fields = cron.trim().split(/\s+/);
  if (fields.length !== 5) return null;
  const [minute = '', hour = '', day = '', month = '', weekday = ''] = fields;
  const days = daysOf(day, month, weekday);
  if (!days) return null;
  const m = number(minute, 59);
  const h = list(hour, 23);
  // More than three times a day reads better as the expression.
  if (m !== null && h) return h.length > 3 ? null : `${days.each} at ${words(h.map((one) => `${pad(one)}:${pad(m)}`))}`;
  const hours = step(hour);
  if (hour !== '*' && !(hours && m !== null)) return null;
  const minutes = step(minute);
  const often = hours ? `every ${hours} hours at :${pad(m ?? 0)}` : minute === '*' ? 'every minute' : m !== null ? `every hour at :${pad(m)}` : minutes ? `every ${minutes} minutes` : null;
  return often && (days.on ? `${often}, ${days.on}` : often);
}

const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const NAMES: Record<string, number> = Object.fromEntries([...WEEKDAYS, ...MONTHS].map((name, i) => [name.slice(0, 3).toLowerCase(), i < 7 ? i : i - 6]));

/** The days as the head of a daily phrase (`each`: "every weekday") and as a qualifier of a more frequent one (`on`: "on weekdays"; empty for every day). */
function daysOf(day: string, month: string, weekday: string): { each: string; on: string } | null {
  const months = month === '*' ? null : list(month, 12, 1);
  if (month !== '*' && !months) return null;
  const inMonths = months ? ` in ${words(months.map((i) => MONTHS[i - 1] ?? ''))}` : '';
  if (day === '*' && weekday === '*') return { each: months ? `every day${inMonths}` : 'every day', on: inMonths.trim() };
  if (weekday === '*') {
    const dates = list(day, 31, 1);
    if (!dates) return null;
    const on = `on the ${words(dates.map(ordinal))} of ${months ? words(months.map((i) => MONTHS[i - 1] ?? '')) : 'every month'}`;
    return { each: on, on };
  }
  if (day !== '*') return null;
  const chosen = weekdayList(weekday);
  if (!chosen) return null;
  const key = chosen.join(',');
  if (key === '1,2,3,4,5') return { each: `every weekday${inMonths}`, on: `on weekdays${inMonths}` };
  if (key === '0,6') return { each: `every Saturday and Sunday${inMonths}`, on: `on weekends${inMonths}` };
  const names = chosen.map((i) => WEEKDAYS[i] ?? '');
  return { each: `every ${words(names)}${inMonths}`, on: `on ${words(names.map((n) => `${n}s`))}${inMonths}` };
}

/** The weekdays a field names (0 Sunday … 6 Saturday; 7 is Sunday too), sorted, or null. */
function weekdayList(field: string): number[] | null {
  const values = list(field.toLowerCase().replace(/[a-z]{3}/g, (name) => String(NAMES[name] ?? 'x')), 7);
  return values && [...new Set(values.map((v) => v % 7))].sort((a, b) => a - b);
}

/** A comma list of numbers and ranges (`1-5`, `1,3,5`) within `min`..`max`, expanded; null for a step, `*` or anything else. */
function list(field: string, max: number, min = 0): number[] | null {
  const out: number[] = [];
  for (const part of field.split(',')) {
    const range = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!range) return null;
    const from = Number(range[1]);
    const to = range[2] === undefined ? from : Number(range[2]);
    if (from < min || to > max || from > to) return null;
    for (let v = from; v <= to; v++) out.push(v);
  }
  return out;
}

function number(field: string, max: number): number | null {
  const one = list(field, max);
  return one?.length === 1 ? (one[0] ?? null) : null;
}

/** N of a step from the start (`*\/N`, `0/N`), or null. */
function step(field: string): number | null {
  const n = /^(?:\*|0)\/(\d+)$/.exec(field)?.[1];
  return n === undefined ? null : Number(n);
}

const pad = (n: number) => String(n).padStart(2, '0');

function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}

/** "a", "a and b", "a, b and c". */
function words(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1) ?? ''}`;
}
