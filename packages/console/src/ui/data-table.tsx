import type { ComponentChildren } from 'preact'

/**
 * A table that scrolls sideways inside its card on a narrow screen (the phone layout), with a
 * column header per name; the rows are the caller's (`<tr>` with a `<th scope="row">` first).
 */
export function DataTable({ columns, testId, children }: { columns: string[]; testId?: string; children: ComponentChildren }) {
  return (
    <div class="table-scroll">
      <table data-testid={testId}>
        <thead>
          <tr>
            {columns.map((column) => (
              <th key={column} scope="col">
                {column}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  )
}
