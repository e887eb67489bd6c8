"""reports/index.html: every report, and per paper at a glance its claims, coverage and largest differences.

The page is static HTML (no script) written from the run's files: the reports, the claims tables
(the source's ``results/<source>/tables/claims/claims.csv`` and, with a mirror, the released files'
``results/released/tables/claims/claims.csv``; columns ``source`` and ``holds``: True, False or empty
for undecided; a paper's claims are counted per source, the run's source first), the papers' world
tables (``results/<source>/tables/<paper>/table<N>.csv``: world value, published value and
difference per cell) and the artefacts the papers' coverage matrices name. The papers come in as
`PaperEntry` values (``itmbench.papers.coverage.index_entries`` makes them from the registry and
each ``papers/<paper>/coverage.csv``), so this engine imports no paper. A coverage item links to its
files only where they are among the artefacts given, so every link resolves; the others are named,
marked as not built by this run. Links are relative to the page; the same inputs give the same bytes.
"""

from __future__ import annotations

import csv
import html
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

VERDICTS: tuple[str, ...] = ("holds", "does not hold", "undecided")
N_DIFFERENCES = 3
DIFFERENCES_NOTE = "The world is a different world: compare for direction."
STYLE = (
    "body{font-family:sans-serif;max-width:72em;margin:2em auto;padding:0 1em;line-height:1.4}"
    "table{border-collapse:collapse;margin:.5em 0 1em}"
    "th,td{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top;font-size:.92em}"
    "th{background:#f4f4f4}td.num{text-align:right;font-variant-numeric:tabular-nums}"
    "li{margin:.3em 0}.note{color:#555;font-style:italic}.absent{color:#888}"
    ".s-world{background:#e3f4e1}.s-released{background:#e1ecf7}.s-transcribed{background:#f3f3f3}"
    ".s-missing{background:#fcf0d8}.s-not-possible{background:#eee;color:#666}td[class^=s-]{white-space:nowrap}"
)


@dataclass(frozen=True)
class CoverageRow:
    """One item of a paper's coverage matrix as the index shows it: its files for this run's source."""

    item: str
    title: str
    status: str
    reason: str
    files: tuple[str, ...] = ()  # the source's (results/<source>/...)
    released_files: tuple[str, ...] = ()  # the released source's (results/released/...)


@dataclass(frozen=True)
class PaperEntry:
    """One paper's section of the index: its name (the report's and the tables' folder), title and coverage."""

    name: str
    title: str
    coverage: tuple[CoverageRow, ...]

    def counts(self, statuses: Sequence[str]) -> dict[str, int]:
        """Coverage items per status, in the order given."""
        return {s: sum(row.status == s for row in self.coverage) for s in statuses}


@dataclass(frozen=True)
class Difference:
    """One world cell beside its published number (a row of a world table's CSV)."""

    table: str
    block: str
    row: str
    model: str
    column: str
    world: float
    published: float
    difference: float
    decimals: int
    source_csv: str


def _verdict(value: str | None) -> str:
    """The claims CSV's holds column as a verdict: True, False, or empty (undecided)."""
    text = (value or "").strip().lower()
    if text in ("true", "1", "1.0"):
        return "holds"
    if text in ("false", "0", "0.0"):
        return "does not hold"
    return "undecided"


def claim_counts(*claims_csvs: str | os.PathLike) -> dict[str, dict[str, dict[str, int]]]:
    """Claims per source, paper and verdict (holds / does not hold / undecided), from claims tables' CSVs
    (each row names its source: the world's, the released files', the published tables')."""
    counts: dict[str, dict[str, dict[str, int]]] = {}
    for claims_csv in claims_csvs:
        with open(claims_csv, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            missing = [c for c in ("paper", "source", "holds") if c not in (reader.fieldnames or ())]
            if missing:
                raise ValueError(
                    f"{claims_csv}: no columns {missing}; expected the claims table (paper, ..., source, holds, ...)"
                )
            for record in reader:
                papers = counts.setdefault(record["source"], {})
                paper = papers.setdefault(record["paper"], dict.fromkeys(VERDICTS, 0))
                paper[_verdict(record["holds"])] += 1
    return counts


def _source_order(counts: Mapping[str, object], source: str) -> list[str]:
    """The claims' sources in the order the index shows them: the run's, the released files', the rest sorted."""
    first = [s for s in (source, "released") if s in counts]
    return first + sorted(s for s in counts if s not in first)


def _float(text: str | None) -> float:
    try:
        return float(text) if text not in (None, "") else math.nan
    except ValueError:
        return math.nan


def world_differences(table_csv: str | os.PathLike) -> list[Difference]:
    """Every cell of one world table with both a world and a published number (status 'compared')."""
    out: list[Difference] = []
    with open(table_csv, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        needed = ("table", "row", "column", "regenerated", "published", "difference", "decimals", "status")
        missing = [c for c in needed if c not in (reader.fieldnames or ())]
        if missing:
            raise ValueError(f"{table_csv}: no columns {missing}; expected a world table (papers.tables.compare)")
        for record in reader:
            diff = _float(record["difference"])
            if record["status"] != "compared" or math.isnan(diff):
                continue
            out.append(
                Difference(
                    table=record["table"],
                    block=record.get("block") or "",
                    row=record["row"],
                    model=record.get("model") or "",
                    column=record["column"],
                    world=_float(record["regenerated"]),
                    published=_float(record["published"]),
                    difference=diff,
                    decimals=int(_float(record["decimals"])) if not math.isnan(_float(record["decimals"])) else 2,
                    source_csv=str(table_csv),
                )
            )
    return out


def largest_differences(table_csvs: Iterable[str | os.PathLike], n: int = N_DIFFERENCES) -> dict[str, list[Difference]]:
    """Per paper (the folder of its tables), its n largest absolute differences; ties in printed order."""
    by_paper: dict[str, list[Difference]] = {}
    for path in sorted(str(p) for p in table_csvs):
        by_paper.setdefault(Path(path).parent.name, []).extend(world_differences(path))
    return {
        paper: sorted(cells, key=lambda d: (-abs(d.difference), d.table, d.block, d.row, d.column))[:n]
        for paper, cells in by_paper.items()
    }


def _normalised(path: str | os.PathLike) -> str:
    """A path as the coverage names it: relative to the working folder, normalised, '/'-separated."""
    p = Path(path)
    if p.is_absolute():
        p = Path(os.path.relpath(p, Path.cwd()))
    return Path(os.path.normpath(p)).as_posix()


class _Page:
    """Builds the page's parts; links are relative to the page's folder."""

    def __init__(self, base: Path, artefacts: Iterable[str | os.PathLike]) -> None:
        self.base = base.resolve()
        self.artefacts = {_normalised(p) for p in artefacts}

    def href(self, path: str | os.PathLike) -> str:
        return html.escape(Path(os.path.relpath(Path(path).resolve(), self.base)).as_posix())

    def link(self, path: str | os.PathLike, text: str) -> str:
        return f'<a href="{self.href(path)}">{html.escape(text)}</a>'

    def outputs_cell(self, row: CoverageRow) -> str:
        """The item's files, one group per file stem: linked where this run built them."""
        groups: dict[tuple[str, bool], list[str]] = {}
        for released, paths in ((False, row.files), (True, row.released_files)):
            for path in paths:
                groups.setdefault((str(Path(path).with_suffix("")), released), []).append(path)
        parts = []
        for (stem, released), paths in groups.items():
            label = ("released " if released else "") + Path(stem).name
            built = [p for p in paths if _normalised(p) in self.artefacts]
            if built:
                links = " ".join(self.link(p, Path(p).suffix.lstrip(".")) for p in built)
                parts.append(f"{html.escape(label)} ({links})")
            else:
                names = ", ".join(html.escape(p) for p in paths)
                parts.append(
                    f'<span class="absent" title="{names}">{html.escape(label)} (not built by this run)</span>'
                )
        return "<br>".join(parts)


def _status_class(status: str) -> str:
    return "s-" + status.replace(" ", "-")


def _fmt(value: float, decimals: int, sign: bool = False) -> str:
    return "–" if math.isnan(value) else f"{value:{'+' if sign else ''}.{decimals}f}"


def _claims_text(counts: Mapping[str, int] | None, source: str) -> str:
    if not counts:
        return f"No claims of this paper are checked on the {html.escape(source)} results."
    total = sum(counts.values())
    parts = ", ".join(f"{v} {counts[v]}" for v in VERDICTS)
    return f"{total} claim{'' if total == 1 else 's'} checked on the {html.escape(source)} results: {parts}."


def index_html(
    base: Path,
    reports: Sequence[str | os.PathLike],
    papers: Sequence[PaperEntry],
    statuses: Sequence[str],
    claims: Sequence[str | os.PathLike] = (),
    tables: Iterable[str | os.PathLike] = (),
    artefacts: Iterable[str | os.PathLike] = (),
    source: str = "world",
    title: str = "itmbench reports",
) -> str:
    """The index page's HTML, its links relative to `base` (the page's folder)."""
    tables = sorted(str(t) for t in tables)
    page = _Page(base, [*artefacts, *tables])
    counts = claim_counts(*claims)
    sources = _source_order(counts, source) if counts else [source]
    differences = largest_differences(tables)
    report_paths = sorted(Path(p) for p in reports)
    names = {entry.name for entry in papers}
    paper_report = {p.stem: p for p in report_paths if p.parent.name == source and p.stem in names}

    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title>",
        f"<style>{STYLE}</style>",
        "</head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<p>Source of this run: <b>{html.escape(source)}</b>. Per paper: its report, its claims, the largest "
        "differences of its world tables from the published numbers, and its coverage: every table and figure "
        "the paper prints, and whether it is regenerated in the world, from the released files, transcribed only, "
        "missing, or not possible here (<code>src/itmbench/papers/&lt;paper&gt;/coverage.csv</code>).</p>",
        "<h2>At a glance</h2>",
        "<table><thead><tr><th>paper</th><th>report</th>"
        + "".join(f"<th>claims on the {html.escape(s)}: {' / '.join(VERDICTS)}</th>" for s in sources)
        + "".join(f'<th class="{_status_class(s)}">{html.escape(s)}</th>' for s in statuses)
        + "</tr></thead><tbody>",
    ]
    for entry in papers:
        name = entry.name
        report = page.link(paper_report[name], "report") if name in paper_report else "–"
        claim_cells = ""
        for s in sources:
            paper_claims = counts.get(s, {}).get(name)
            shown = " / ".join(str(paper_claims[v]) for v in VERDICTS) if paper_claims else "–"
            claim_cells += f'<td class="num">{shown}</td>'

        status_cells = "".join(f'<td class="num">{n}</td>' for n in entry.counts(statuses).values())
        parts.append(
            f'<tr><td><a href="#{name}">{html.escape(entry.title)}</a></td><td>{report}</td>'
            f"{claim_cells}{status_cells}</tr>"
        )
    parts.append("</tbody></table>")

    parts.append("<h2>Reports</h2>")
    groups: dict[str, list[Path]] = {}
    for r in report_paths:
        groups.setdefault(r.parent.name, []).append(r)
    for group, paths in groups.items():
        parts.append(f"<h3>source: {html.escape(group)}</h3><ul>")
        parts.extend(f"<li>{page.link(p, p.stem)}</li>" for p in paths)
        parts.append("</ul>")

    for entry in papers:
        name = entry.name
        parts.append(f'<section id="{name}">')
        parts.append(f"<h2>{html.escape(entry.title)}</h2>")
        links = [page.link(paper_report[name], "report")] if name in paper_report else ["no report in this run"]
        for path in claims:
            of = Path(path).parent.parent.parent.name or "claims"  # results/<source>/tables/claims/claims.csv
            links.append(page.link(Path(path).with_suffix(".md"), f"claims table ({of})"))
        parts.append(f"<p>{' · '.join(links)}</p>")
        parts.append("<h3>Claims</h3>")
        parts.extend(f"<p>{_claims_text(counts.get(s, {}).get(name), s)}</p>" for s in sources)
        parts.append("<h3>Largest differences from the published numbers</h3>")
        parts.append(f'<p class="note">{DIFFERENCES_NOTE}</p>')
        cells = differences.get(name, [])
        if cells:
            parts.append(
                "<table><thead><tr><th>table</th><th>row</th><th>column</th><th>world</th><th>published</th>"
                "<th>difference</th></tr></thead><tbody>"
            )
            for d in cells:
                md = str(Path(d.source_csv).with_suffix(".md"))
                target = md if _normalised(md) in page.artefacts else d.source_csv
                table = d.table + (f" ({d.block})" if d.block else "")
                row = d.row + (f" ← {d.model}" if d.model and d.model != d.row else "")
                parts.append(
                    f"<tr><td>{page.link(target, table)}</td><td>{html.escape(row)}</td>"
                    f'<td>{html.escape(d.column)}</td><td class="num">{_fmt(d.world, d.decimals)}</td>'
                    f'<td class="num">{_fmt(d.published, d.decimals)}</td>'
                    f'<td class="num">{_fmt(d.difference, d.decimals, sign=True)}</td></tr>'
                )
            parts.append("</tbody></table>")
        else:
            parts.append("<p>No cell of this paper's world tables has a published counterpart in this run.</p>")
        summary = ", ".join(f"{n} {s}" for s, n in entry.counts(statuses).items() if n)
        parts.append(f"<h3>Coverage</h3><p>{summary}.</p>")
        parts.append(
            "<table><thead><tr><th>item</th><th>title</th><th>status</th><th>files</th><th>reason</th></tr>"
            "</thead><tbody>"
        )
        for row in entry.coverage:
            parts.append(
                f"<tr><td>{html.escape(row.item)}</td><td>{html.escape(row.title)}</td>"
                f'<td class="{_status_class(row.status)}">{html.escape(row.status)}</td>'
                f"<td>{page.outputs_cell(row)}</td><td>{html.escape(row.reason)}</td></tr>"
            )
        parts.append("</tbody></table></section>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


__all__ = [
    "DIFFERENCES_NOTE",
    "CoverageRow",
    "Difference",
    "PaperEntry",
    "claim_counts",
    "index_html",
    "largest_differences",
    "world_differences",
]
