/** Printing answers: aligned tables for people, CSV and JSON for scripts. */

export type Format = 'table' | 'csv' | 'json';
export const FORMATS: readonly Format[] = ['table', 'csv', 'json'];

const cell = (value: unknown): string => {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
};

/** A table of rows under headers, columns padded to their widest cell (cells cut at 60 characters). */
export function table(headers: string[], rows: unknown[][]): string {
  const text = rows.map((r) => r.map((v) => oneLine(cell(v))));
  const widths = headers.map((h, i) => Math.max(h.length, ...text.map((r) => (r[i] ?? '').length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...text.map(line)].join('\n');
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > 60 ? `${flat.slice(0, 59)}…` : flat;
}

/** RFC 4180 CSV: fields with a comma, quote or line break are quoted, quotes doubled. */
export function csv(headers: string[], rows: unknown[][]): string {
  const field = (value: unknown) => {
    const text = cell(value);
    return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
  };
  return [headers.map(field).join(','), ...rows.map((r) => r.map(field).join(','))].join('\n');
}

export function render(format: Format, headers: string[], rows: unknown[][], json: unknown): string {
  if (format === 'json') return JSON.stringify(json, null, 2);
  if (format === 'csv') return csv(headers, rows);
  return table(headers, rows);
}

/** Records as table rows, by the given keys. */
export function rowsOf(records: Record<string, unknown>[], keys: string[]): unknown[][] {
  return records.map((r) => keys.map((k) => r[k]));
}
