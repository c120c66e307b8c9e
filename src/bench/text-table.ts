/** Plain-text tables for terminal output: padded columns, a rule under the header. */

export type ColumnAlign = 'left' | 'right';

export interface TableColumn {
  header: string;
  /** Default: right, which suits numbers. */
  align?: ColumnAlign;
}

/**
 * Renders rows under the given columns; a row shorter than the column list is padded with blanks.
 * Column widths follow the longest cell (counted in UTF-16 units, fine for the ASCII this package prints).
 */
export function renderTable(columns: readonly TableColumn[], rows: readonly (readonly string[])[]): string {
  const widths = columns.map((column, index) =>
    Math.max(column.header.length, ...rows.map((row) => (row[index] ?? '').length)),
  );
  const formatRow = (cells: readonly string[]): string =>
    columns
      .map((column, index) => {
        const cell = cells[index] ?? '';
        const width = widths[index] ?? 0;
        return (column.align ?? 'right') === 'left' ? cell.padEnd(width) : cell.padStart(width);
      })
      .join('  ')
      .trimEnd();
  const lines = [formatRow(columns.map((column) => column.header)), widths.map((width) => '-'.repeat(width)).join('  ')];
  for (const row of rows) lines.push(formatRow(row));
  return lines.join('\n');
}
