import { Fragment, type ReactNode } from "react";
import { ErrorAlert } from "./error-alert";

// The console's one table: a framed, scrollable table with a caption for screen readers, the header row every
// list shares, one row per item, and in its place an empty state, a loading line or the reason a refresh failed.
// A screen says what its columns show; the look (padding, header, dimmed rows) lives here.

export type Column<T> = {
  /** The header's text; with `hidden`, read by screen readers only (a column of buttons). */
  header: string;
  hidden?: boolean;
  cell: (row: T) => ReactNode;
  /** The cell names its row: a `th scope="row"` (a policy's class, a runtime). */
  rowHeader?: boolean;
  /** Classes of this column's cells: `nowrap`, `right`, `mono` and anything else Tailwind. */
  className?: string;
  /** A fixed width (Tailwind, `w-24`): the table then lays out by its header, and long text is cut. */
  width?: string;
};

/** The last column: a row's buttons side by side at the right, its header read by screen readers only. */
export function actionsColumn<T>(cell: (row: T) => ReactNode): Column<T> {
  return {
    header: "Actions",
    hidden: true,
    className: "nowrap right",
    cell: (row) => <span className="inline-flex items-center gap-2">{cell(row)}</span>,
  };
}

/** What a table's rows are: their key, their test id, and how some of them are drawn. */
export type RowSpec<T> = {
  /** Unique among the rows; the index, for lists whose items have no id of their own. */
  key: (row: T, index: number) => string;
  /** The `data-testid` of every row. */
  testId?: string;
  /** More `data-*` attributes of a row (`{ "data-class": "money" }`). */
  data?: (row: T) => Record<`data-${string}`, string>;
  /** A row that no longer acts (revoked, disabled, deactivated) is drawn muted. */
  dimmed?: (row: T) => boolean;
  /** Cells start at the top (rows of several lines). */
  top?: boolean;
  /** A row drawn by the screen instead of from the columns (an inline editor); undefined draws the columns. */
  render?: (row: T) => ReactNode | undefined;
  /** Shown under a row across the whole table (its details), or nothing. */
  detail?: (row: T) => ReactNode;
};

/** A page's list; a wide one (the audit trail, a log); one inside a dialog or another table. */
export type TableSize = "page" | "dense" | "compact";

export type DataTableProps<T> = {
  /** What the table lists, for screen readers (the caption, which also names the table). */
  caption: string;
  columns: ReadonlyArray<Column<T> | false | null>;
  rows: readonly T[];
  row: RowSpec<T>;
  /** Shown instead of the table when there are no rows (and nothing is loading). */
  empty?: ReactNode;
  /** The first page is still on its way. */
  loading?: boolean;
  /** A failed refresh: the rows shown are the last ones read. */
  error?: unknown;
  errorPrefix?: string;
  /** Under the rows, inside the frame: "Show more", a count. */
  footer?: ReactNode;
  size?: TableSize;
  /** A long list scrolls inside its frame, under a header that stays. */
  scroll?: boolean;
  /** The `data-testid` of the table, and of its body (the rows without the header). */
  testId?: string;
  bodyTestId?: string;
};

const padding: Record<TableSize, string> = { page: "px-4 py-2", dense: "px-3 py-2", compact: "px-2 py-1.5" };
export const tableHeadClass = "whitespace-nowrap bg-slate-50 text-xs uppercase tracking-wide text-slate-500";
const words: Record<string, string> = {
  nowrap: "whitespace-nowrap",
  right: "text-right",
  mono: "font-mono text-xs",
};

/** Classes joined, the table's shorthands (`nowrap`, `right`, `mono`) spelled out, the empty ones left out. */
const classes = (...parts: Array<string | false | undefined>) =>
  parts
    .flatMap((part) => (part ? part.split(" ") : []))
    .map((c) => words[c] ?? c)
    .filter(Boolean)
    .join(" ");

/** One cell with the table's padding; a screen's own rows (inline editors) use it too. */
export function Cell({
  children,
  className,
  size = "page",
  rowHeader,
  colSpan,
}: {
  children?: ReactNode;
  className?: string;
  size?: TableSize;
  rowHeader?: boolean;
  colSpan?: number;
}) {
  const cls = classes(padding[size], className);
  return rowHeader ? (
    <th scope="row" className={classes(cls, "text-left font-medium")}>
      {children}
    </th>
  ) : (
    <td className={cls} colSpan={colSpan}>
      {children}
    </td>
  );
}

/** The muted look of a row that no longer acts, and the tint of a row being edited. */
export const rowLook = { dimmed: "bg-slate-50 text-slate-500", editing: "bg-indigo-50/50" } as const;

export function DataTable<T>(props: DataTableProps<T>) {
  const { rows, loading, empty, error, errorPrefix = "Could not refresh the list:", scroll } = props;
  const alert = <ErrorAlert error={error} prefix={errorPrefix} />;
  if (loading)
    return (
      <>
        {alert}
        <p className="text-sm text-slate-600">Loading…</p>
      </>
    );
  if (rows.length === 0 && empty !== undefined)
    return (
      <>
        {alert}
        {empty}
      </>
    );
  return (
    <>
      {alert}
      {/* Relative: what is there only for screen readers stays inside the frame, not beyond the page's edge. */}
      <div
        className={classes(
          "relative rounded-lg border border-slate-200 bg-white shadow-sm",
          scroll ? "max-h-80 overflow-auto" : "overflow-x-auto",
        )}
      >
        <Table {...props} />
        {props.footer ? (
          <div className="flex items-center gap-3 border-t border-slate-100 px-4 py-2 text-sm text-slate-600">
            {props.footer}
          </div>
        ) : null}
      </div>
    </>
  );
}

function Table<T>({ caption, columns, rows, row: spec, size = "page", scroll, testId, bodyTestId }: DataTableProps<T>) {
  const shown = columns.filter((c): c is Column<T> => Boolean(c));
  const fixed = shown.some((c) => c.width);
  return (
    <table
      data-testid={testId}
      className={classes("w-full text-left", size === "compact" ? "text-xs" : "text-sm", fixed && "table-fixed")}
    >
      <caption className="sr-only">{caption}</caption>
      <thead className={classes(tableHeadClass, scroll && "sticky top-0")}>
        <tr>
          {shown.map((c) => (
            <th
              key={c.header}
              scope="col"
              className={classes(
                padding[size],
                c.width,
                "font-medium",
                c.className?.split(" ").includes("right") && "text-right",
              )}
            >
              {c.hidden ? <span className="sr-only">{c.header}</span> : c.header}
            </th>
          ))}
        </tr>
      </thead>
      <tbody data-testid={bodyTestId} className="divide-y divide-slate-100">
        {rows.map((row, index) => {
          const own = spec.render?.(row);
          const more = spec.detail?.(row);
          const look = classes(spec.top && "align-top", spec.dimmed?.(row) && rowLook.dimmed);
          return (
            <Fragment key={spec.key(row, index)}>
              {own !== undefined ? (
                own
              ) : (
                <tr data-testid={spec.testId} {...spec.data?.(row)} className={look || undefined}>
                  {shown.map((c) => (
                    <Cell key={c.header} className={c.className} size={size} rowHeader={c.rowHeader}>
                      {c.cell(row)}
                    </Cell>
                  ))}
                </tr>
              )}
              {more ? (
                <tr>
                  <td colSpan={shown.length} className="bg-slate-50/60 px-3 py-3">
                    {more}
                  </td>
                </tr>
              ) : null}
            </Fragment>
          );
        })}
      </tbody>
    </table>
  );
}
