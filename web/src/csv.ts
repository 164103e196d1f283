/** The SQL console's CSV download (pages/sql-page.tsx). */

/**
 * One CSV cell. Text that a spreadsheet would read as a formula (it starts with = + - @, a tab or a
 * carriage return: OWASP's CSV injection list) gets a leading single quote, so end users' text in
 * spans can't run in whoever opens the file. Numbers, and text that is exactly a number (64-bit
 * integers arrive as text), are left as they are.
 */
export function csvCell(v: unknown): string {
  let s = v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
  if (typeof v !== 'number' && /^[=+\-@\t\r]/.test(s) && !/^[-+]?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(s)) s = `'${s}`;
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function toCsv(result: { columns: readonly { name: string }[]; rows: readonly (readonly unknown[])[] }): string {
  const lines = [result.columns.map((c) => csvCell(c.name)).join(',')];
  for (const row of result.rows) lines.push(row.map(csvCell).join(','));
  return lines.join('\r\n') + '\r\n';
}
