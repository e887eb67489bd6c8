"""Two runs' regenerated tables and metrics compared cell by cell: what changed, by how much, and whether
beyond the cell's interval (`itmbench diff-results OLD NEW`).

A side is a results tree or a git revision (`itmbench.report.diff_sides`):
- a folder `results/<source>` (it has `tables/` or `metrics/`), a `results` folder, or a checkout root
  (it has `results/`): every `results/<source>` in it;
- otherwise a git revision of the repository at `repo` (`HEAD~1`, a branch, a commit): its files are
  read through DVC where the repository uses DVC (a shared `results/world` is DVC-tracked, read from the
  DVC cache or the default remote) and with git otherwise.
When one side is a single source tree, the other side is narrowed to the source of the same name (or,
when both are, the two are compared whatever their names); paths are then shown relative to it.

Compared: every `tables/**/*.csv` and `metrics/**/*.json` of each source, split into cells.
- A long table (columns `row`, `column`, `value`, with `lo`, `hi` and any of `table`, `block`, as
  `itmbench.report.tables.write_table` and `itmbench.papers.tables.write_comparison` write them): one
  cell per (table, block, row, column), a measurement (value, lo, hi); its other columns (a note, the
  published value) are its text fields.
- A metrics file: one measurement per dict holding a `value` (`lo`, `hi` its interval, its other keys
  such as `n` its fields), keyed by its path; every other leaf (a count, the confidence, the model's
  name) is an attribute.
- Any other CSV (the claims): one attribute per (record, column), a record keyed by the shortest prefix
  of its columns that is unique on both sides.

Two numbers are equal when `math.isclose(a, b, rel_tol=rel_tol, abs_tol=1e-12)` (default relative
tolerance 1e-9), and NaN equals NaN. A cell present on both sides is:
- beyond: a measurement whose value differs and the new value lies outside the old cell's interval
  [lo, hi] or the old value outside the new cell's (ends included, within the tolerance); with an
  interval on neither side, any difference;
- changed: anything else that differs (a value within the intervals, an interval, a text field, an
  attribute);
- added / removed: it has a value (not NaN) on the new / old side only.
Cells and whole files on one side only are added / removed. Exit status (`Diff.exit_status`): 0 nothing
differs, 1 something differs and nothing is beyond, 4 some cell is beyond (2 and 3 are the error contract's: bad
input, a bug). Bad input (a side that is
neither a results tree nor a revision, a malformed file) raises ValueError naming the file and line (the
CLI's exit 2).
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from itmbench.report.diff_sides import Side, align, resolve

ABS_TOL = 1e-12
DEFAULT_REL_TOL = 1e-9
LONG_NUMBERS = ("value", "lo", "hi")
LONG_KEYS = ("table", "block", "row", "column")  # row and column always; table and block where present
STATUSES = ("beyond", "changed", "added", "removed")
# 2 and 3 are the error contract's (bad input, a bug: itmbench.errors); a cell beyond its interval is 4
EXIT_UNCHANGED, EXIT_CHANGED, EXIT_BEYOND = 0, 1, 4
CSV_COLUMNS = "file row column status old old_lo old_hi new new_lo new_hi difference fields".split()
# The statuses and the exit status in a few lines: `itmbench diff-results --help` and docs/outputs.md quote it.
DEFINITION = f"""\
beyond   a cell's value differs and the new value lies outside the old cell's interval [lo, hi],
         or the old value outside the new cell's (ends included); with an interval on neither
         side, any difference
changed  anything else that differs: a value within the intervals, an interval, a note, an
         attribute (a count or a name beside a metric, a field of a claim)
added    a file, a cell, or a cell's value (NaN is none) on the new side only
removed  the same on the old side only
equal    numbers within --rel-tol (relative, default {DEFAULT_REL_TOL:g}; absolute {ABS_TOL:g}), or both NaN
exit     {EXIT_UNCHANGED} nothing differs; {EXIT_CHANGED} something differs, nothing beyond;
         {EXIT_BEYOND} some cell beyond; 2 bad input (a side that is neither a results tree nor a
         revision, a malformed file)"""

NAN = float("nan")


# --- cells ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cell:
    """One cell: a number with its interval (NaN: none), or text; and its other fields as text."""

    value: float = NAN
    lo: float = NAN
    hi: float = NAN
    text: str | None = None
    fields: tuple[tuple[str, str], ...] = ()
    measured: bool = True  # a table cell or a metrics value, judged against its interval; False: an attribute

    @property
    def has_value(self) -> bool:
        return self.text is not None or not math.isnan(self.value)

    @property
    def interval(self) -> tuple[float, float] | None:
        return None if math.isnan(self.lo) or math.isnan(self.hi) else (self.lo, self.hi)


@dataclass
class Table:
    """The cells of one file, keyed by a tuple whose last part is the column; `sep` joins the row's parts."""

    cells: dict[tuple[str, ...], Cell]
    sep: str = " / "


def _same(a: float, b: float, rel_tol: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=rel_tol, abs_tol=ABS_TOL)


def _inside(v: float, interval: tuple[float, float], rel_tol: float) -> bool:
    lo, hi = interval
    return lo <= v <= hi or _same(v, lo, rel_tol) or _same(v, hi, rel_tol)


def cell_status(old: Cell, new: Cell, rel_tol: float = DEFAULT_REL_TOL) -> str | None:
    """'beyond', 'changed', 'added', 'removed', or None when the two cells are the same (module docstring)."""
    if old.has_value != new.has_value:
        return "added" if new.has_value else "removed"
    if old.text is not None or new.text is not None:
        old_text = old.text if old.text is not None else _num(old.value)
        new_text = new.text if new.text is not None else _num(new.value)
        return "changed" if old_text != new_text or old.fields != new.fields else None
    moved = not _same(old.value, new.value, rel_tol)
    if moved and not (old.measured and new.measured):
        return "changed"
    if moved:
        if old.interval is None and new.interval is None:
            return "beyond"
        if old.interval is not None and not _inside(new.value, old.interval, rel_tol):
            return "beyond"
        if new.interval is not None and not _inside(old.value, new.interval, rel_tol):
            return "beyond"
        return "changed"
    if not (_same(old.lo, new.lo, rel_tol) and _same(old.hi, new.hi, rel_tol)) or old.fields != new.fields:
        return "changed"
    return None


# --- parsing -------------------------------------------------------------------------------------


def _float(text: str, where: str, name: str) -> float:
    if text.strip() == "":
        return NAN
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{where}: column {name!r} is {text!r}; expected a number or nothing") from None


def _records(data: bytes, where: str) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """(header, [(line, record)]) of a CSV file; a record with the wrong number of fields is an error."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{where}: not UTF-8 text ({err.reason} at byte {err.start})") from None
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader, None)
        if not header:
            raise ValueError(f"{where}:1: no header line; expected a CSV table")
        if len(set(header)) != len(header):
            raise ValueError(f"{where}:1: repeated column names in the header {header}")
        rows, start = [], reader.line_num + 1
        for fields in reader:
            if fields and len(fields) != len(header):
                raise ValueError(
                    f"{where}:{start}: {len(fields)} fields; expected {len(header)} (the header's {header})"
                )
            if fields:
                rows.append((start, dict(zip(header, fields))))
            start = reader.line_num + 1
    except csv.Error as err:
        raise ValueError(f"{where}:{reader.line_num}: malformed CSV ({err})") from None
    return header, rows


def is_long(header: Iterable[str]) -> bool:
    """A long table: row, column and value columns (write_table's and write_comparison's CSVs)."""
    return {"row", "column", "value"} <= set(header)


def _long_table(header: list[str], rows: list[tuple[int, dict[str, str]]], where: str) -> Table:
    keys = [k for k in LONG_KEYS if k in header]
    others = [c for c in header if c not in keys and c not in LONG_NUMBERS]
    cells: dict[tuple[str, ...], Cell] = {}
    first: dict[tuple[str, ...], int] = {}
    for line, rec in rows:
        key = tuple(rec[k] for k in keys)
        if key in cells:
            raise ValueError(f"{where}:{line}: cell {key} repeats line {first[key]}; expected one line per cell")
        numbers = [_float(rec.get(n, ""), f"{where}:{line}", n) for n in LONG_NUMBERS]
        cells[key] = Cell(*numbers, fields=tuple((c, rec[c]) for c in others))
        first[key] = line
    return Table(cells)


def _unique_prefix(header: list[str], sides: Iterable[list[tuple[int, dict[str, str]]]]) -> int:
    """The length of the shortest prefix of `header` unique on every side (0: no prefix is)."""
    sides = list(sides)
    for n in range(1, len(header) + 1):
        if all(len({tuple(r[c] for c in header[:n]) for _, r in rows}) == len(rows) for rows in sides):
            return n
    return 0


def _record_table(header: list[str], rows: list[tuple[int, dict[str, str]]], key: list[str]) -> Table:
    """One attribute per (record, non-key column); without a key, one per record (its repeats numbered)."""
    cells: dict[tuple[str, ...], Cell] = {}
    if not key:
        seen: dict[tuple[str, ...], int] = {}
        for _, rec in rows:
            values = tuple(rec[c] for c in header)
            seen[values] = seen.get(values, 0) + 1
            cells[(*values, f"#{seen[values]}")] = Cell(text="", measured=False)
        return Table(cells)
    for _, rec in rows:
        for c in header:
            if c not in key:
                cells[(*(rec[k] for k in key), c)] = _text_or_number(rec[c])
    return Table(cells)


def _text_or_number(text: str) -> Cell:
    try:
        return Cell(value=float(text), measured=False) if text.strip() else Cell(text=text, measured=False)
    except ValueError:
        return Cell(text=text, measured=False)


def csv_tables(old: bytes, new: bytes, old_where: str, new_where: str) -> tuple[Table, Table]:
    """The cells of two versions of one CSV file, keyed alike (see the module docstring)."""
    (h_old, r_old), (h_new, r_new) = _records(old, old_where), _records(new, new_where)
    if is_long(h_old) and is_long(h_new):
        return _long_table(h_old, r_old, old_where), _long_table(h_new, r_new, new_where)
    common = [c for c in h_old if c in h_new]
    key = common[: _unique_prefix(common, [r_old, r_new])]
    return _record_table(h_old, r_old, key), _record_table(h_new, r_new, key)


def _number_or_nan(v: Any) -> float:
    return NAN if v is None else float(v)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_cell(node: Any) -> bool:
    return isinstance(node, dict) and "value" in node and (node["value"] is None or _is_number(node["value"]))


def metrics_table(data: bytes, where: str) -> Table:
    """The cells of one metrics JSON file (see the module docstring)."""
    from itmbench.reading import parse_json

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{where}: not UTF-8 text ({err.reason} at byte {err.start})") from None
    doc = parse_json(text, where)  # a key twice in one object is an error naming both lines, not "last one wins"
    if not isinstance(doc, dict):  # every metrics file is an object: a list's items would be keyed by nothing
        raise ValueError(f"{where}: top level is a JSON {type(doc).__name__}; expected an object (a metrics file)")
    cells: dict[tuple[str, ...], Cell] = {}

    def walk(node: Any, path: tuple[str, ...]) -> None:
        if _is_cell(node):
            try:
                lo, hi = (_number_or_nan(node.get(k)) for k in ("lo", "hi"))
            except (TypeError, ValueError):
                raise ValueError(f"{where}: {'.'.join(path)}: lo and hi must be numbers or null") from None
            extra = tuple((k, json.dumps(v, sort_keys=True)) for k, v in sorted(node.items()) if k not in LONG_NUMBERS)
            cells[path or ("",)] = Cell(_number_or_nan(node["value"]), lo, hi, fields=extra)
        elif isinstance(node, dict):
            for k in sorted(node):
                walk(node[k], (*path, str(k)))
        elif _is_number(node) or node is None:
            cells[path or ("",)] = Cell(value=_number_or_nan(node), measured=False)
        else:
            text = node if isinstance(node, str) else json.dumps(node, sort_keys=True)
            cells[path or ("",)] = Cell(text=text, measured=False)

    walk(doc, ())
    return Table(cells, sep=".")


# --- the comparison ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Change:
    """One line of the report: a cell, or a whole file (`whole_file`: on one side only), that differs."""

    file: str
    row: str
    column: str
    status: str
    old: Cell | None
    new: Cell | None
    whole_file: bool = False


@dataclass
class Diff:
    """Every change between two sides, sorted by file and cell, with what was compared."""

    old_label: str
    new_label: str
    changes: list[Change]
    tables: int
    metrics: int

    def count(self, status: str, files: bool = False) -> int:
        return sum(1 for c in self.changes if c.status == status and c.whole_file == files)

    @property
    def exit_status(self) -> int:
        """0 nothing differs, 1 something differs within its interval (or was added/removed), 4 beyond."""
        if any(c.status == "beyond" for c in self.changes):
            return EXIT_BEYOND
        return EXIT_CHANGED if self.changes else EXIT_UNCHANGED


def compare_tables(name: str, old: Table, new: Table, rel_tol: float = DEFAULT_REL_TOL) -> list[Change]:
    """The changes between two versions of one file's cells, sorted by cell key."""
    out = []
    for key in sorted(set(old.cells) | set(new.cells)):
        a, b = old.cells.get(key), new.cells.get(key)
        status = "added" if a is None else "removed" if b is None else cell_status(a, b, rel_tol)
        if status is not None:
            sep = old.sep if a is not None else new.sep
            out.append(Change(name, sep.join(k for k in key[:-1] if k), key[-1], status, a, b))
    return out


def diff(old: Side, new: Side, rel_tol: float = DEFAULT_REL_TOL) -> Diff:
    """Compare every table and metrics file of two sides (see the module docstring)."""
    old_files, new_files = align(old, new)
    changes: list[Change] = []
    for name in sorted(set(old_files) | set(new_files)):
        if name not in new_files:
            changes.append(Change(name, "", "", "removed", None, None, whole_file=True))
            continue
        if name not in old_files:
            changes.append(Change(name, "", "", "added", None, None, whole_file=True))
            continue
        ka, kb = old_files[name], new_files[name]
        a, b = old.files[ka](), new.files[kb]()
        if a == b:
            continue
        wa, wb = old.where[ka], new.where[kb]
        if name.endswith(".json"):
            ta, tb = metrics_table(a, wa), metrics_table(b, wb)
        else:
            ta, tb = csv_tables(a, b, wa, wb)
        changes += compare_tables(name, ta, tb, rel_tol)
    both = set(old_files) | set(new_files)
    n_metrics = sum(1 for n in both if n.endswith(".json"))
    return Diff(old.label, new.label, changes, len(both) - n_metrics, n_metrics)


def diff_results(old: str, new: str, repo: str | Path = ".", rel_tol: float = DEFAULT_REL_TOL) -> Diff:
    """Compare two sides given as the user types them (folders or git revisions of `repo`)."""
    return diff(resolve(old, repo), resolve(new, repo), rel_tol)


# --- output --------------------------------------------------------------------------------------


def _num(v: float) -> str:
    """A number for reading: up to 6 decimals, no trailing zeros; small ones in 3 significant digits."""
    if math.isnan(v):
        return "–"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v != 0 and abs(v) < 1e-4:
        return f"{v:.3g}"
    text = f"{v:.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _shown(c: Cell | None) -> str:
    if c is None or not c.has_value:
        return "–"
    if c.text is not None:
        return c.text or "–"
    return _num(c.value) + (f" ({_num(c.lo)}–{_num(c.hi)})" if c.interval else "")


def _difference(c: Change) -> float:
    if c.old is None or c.new is None or c.old.text is not None or c.new.text is not None:
        return NAN
    return c.new.value - c.old.value


def _fields(c: Change) -> str:
    old = dict(c.old.fields) if c.old else {}
    new = dict(c.new.fields) if c.new else {}
    if c.old is None or c.new is None:
        return ""
    return "; ".join(
        f"{k}: {old.get(k, '')} → {new.get(k, '')}" for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)
    )


def _md_cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|") or " "


def summary(d: Diff) -> str:
    """One sentence: what was compared and how many cells and files differ, by status."""
    cells = ", ".join(f"{d.count(s)} {s}" for s in STATUSES)
    files = f"{d.count('added', files=True)} added, {d.count('removed', files=True)} removed"
    return f"Compared {d.tables} tables and {d.metrics} metrics files. Cells: {cells}. Files: {files}."


def markdown(d: Diff) -> str:
    """The report as Markdown: a summary, the files on one side only, then one table per changed file."""
    lines = [f"**Results diff: `{d.old_label}` (old) → `{d.new_label}` (new)**", ""]
    if not d.changes:
        return "\n".join([*lines, f"No differences. Compared {d.tables} tables and {d.metrics} metrics files."]) + "\n"
    lines += [summary(d), ""]
    one_side = [c for c in d.changes if c.whole_file]
    if one_side:
        lines += ["| file on one side only | status |", "|---|---|"]
        lines += [f"| {_md_cell(c.file)} | {c.status} |" for c in one_side]
        lines.append("")
    by_file: dict[str, list[Change]] = {}
    for c in d.changes:
        if not c.whole_file:
            by_file.setdefault(c.file, []).append(c)
    for name, changes in by_file.items():
        with_fields = any(_fields(c) for c in changes)
        header = ["row", "column", "status", "old", "new", "difference", *(["fields"] if with_fields else [])]
        lines += [f"`{name}`", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for c in changes:
            diff_text = "" if math.isnan(_difference(c)) else ("+" if _difference(c) > 0 else "") + _num(_difference(c))
            cells = [c.row, c.column, c.status, _shown(c.old), _shown(c.new), diff_text]
            cells += [_fields(c)] if with_fields else []
            lines.append("| " + " | ".join(_md_cell(x) for x in cells) + " |")
        lines.append("")
    return "\n".join(lines)


def _exact(v: float) -> str:
    return "" if math.isnan(v) else repr(float(v))


def csv_text(d: Diff) -> str:
    """The report as CSV (one line per change, numbers exact; columns CSV_COLUMNS)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for c in d.changes:
        row = [c.file, c.row, c.column, c.status]
        for cell in (c.old, c.new):
            if cell is None:
                row += ["", "", ""]
            elif cell.text is not None:
                row += [cell.text, "", ""]
            else:
                row += [_exact(cell.value), _exact(cell.lo), _exact(cell.hi)]
        row += [_exact(_difference(c)), _fields(c)]
        w.writerow(row)
    return buf.getvalue()
