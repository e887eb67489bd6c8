"""Each paper's coverage matrix: every table and figure it prints, and what this project does with it.

Each paper's package holds ``coverage.csv``, one line per numbered table and figure of the paper
(appendix included, in the paper's own numbering: "Table 4", "Figure E.2", "Appendix Table 3" where
an appendix numbers its own), plus the sections whose numbers are quoted only in the text
("Section 6", as `published_results.csv` files them) and the world's own summary figure, which has no
printed counterpart ("Summary figure"). SugarCrepe's paper is not among the project's sources: its
list holds the items of BiVLC's paper that print SugarCrepe's numbers ("BiVLC Table 3").

``item``
    The item as the paper numbers it.
``title``
    The first words of its printed caption.
``status``
    ``world`` (regenerated in the generated world), ``released`` (regenerated from the released
    files), ``transcribed`` (the published values are data, nothing to recompute), ``missing``
    (possible here, not built yet) or ``not possible`` (a photograph, a screenshot, a diagram, or
    numbers that need data this project cannot have).
``outputs``
    For a regenerated item, the rule outputs that hold it, separated by ``;``: ``{source}`` stands
    for the source a run regenerates (``results/{source}/tables/bison/table1.csv``), and
    ``{a,b,c}`` for alternatives (``table1.{csv,md,tex}``). A ``world`` item names at least one
    ``{source}`` output and may name released ones beside it; a ``released`` item names only
    outputs under ``results/released/``. Empty for the other statuses.
``reason``
    One line: required unless the item is regenerated, where it may say what the regeneration
    leaves out.
"""

from __future__ import annotations

import csv
import itertools
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from itmbench.report.index import CoverageRow, PaperEntry

STATUSES: tuple[str, ...] = ("world", "released", "transcribed", "missing", "not possible")
REGENERATED: frozenset[str] = frozenset({"world", "released"})
COLUMNS: tuple[str, ...] = ("item", "title", "status", "outputs", "reason")
FILENAME = "coverage.csv"
RELEASED_ROOT = "results/released/"
SOURCE_FIELD = "{source}"
# A numbered table or figure, as the papers number them ("Table 4", "Figure E.2", "Appendix Table 3").
NUMBERED = re.compile(r"^(?:Appendix )?(?:Table|Figure) (?:[A-Z]\.)?\d+$")
_ALTERNATIVES = re.compile(r"\{([^{}]*,[^{}]*)\}")


class CoverageError(ValueError):
    """A coverage.csv that does not follow the format; the message names the file and the line."""


@dataclass(frozen=True)
class CoverageItem:
    """One table or figure of a paper and what the project does with it."""

    paper: str
    item: str
    title: str
    status: str
    outputs: tuple[str, ...]  # path patterns, alternatives expanded, {source} kept
    reason: str

    @property
    def regenerated(self) -> bool:
        """Whether a rule output holds it (status world or released)."""
        return self.status in REGENERATED

    def paths(self, source: str, released: bool = True) -> tuple[str, ...]:
        """Its output paths for one source; those under results/released/ only when `released`."""
        return tuple(p.replace(SOURCE_FIELD, source) for p in self.outputs if released or not is_released_path(p))


def is_released_path(path: str) -> bool:
    """Whether an output is the released source's (results/released/...), not a run's source."""
    return path.startswith(RELEASED_ROOT)


def expand_alternatives(pattern: str) -> list[str]:
    """'a.{csv,md}' -> ['a.csv', 'a.md'] (every group with a comma; '{source}' is kept)."""
    parts = _ALTERNATIVES.split(pattern)
    choices = [[p] if i % 2 == 0 else p.split(",") for i, p in enumerate(parts)]
    return ["".join(combo) for combo in itertools.product(*choices)]


def coverage_path(paper: str) -> Path:
    """Where a paper's coverage.csv lives inside the installed package."""
    from itmbench.papers.registry import PAPERS

    if paper not in PAPERS:
        raise KeyError(f"unknown paper {paper!r}; expected one of {', '.join(PAPERS)}")
    return Path(str(resources.files("itmbench.papers").joinpath(paper, FILENAME)))


def _check_outputs(where: str, status: str, outputs: list[str]) -> None:
    """The outputs a status needs: named when regenerated, none otherwise; {source} where it belongs."""
    if status not in REGENERATED:
        if outputs:
            raise CoverageError(f"{where}: status {status!r} names outputs {outputs}; expected none")
        return
    if not outputs:
        raise CoverageError(f"{where}: status {status!r} names no outputs; expected the rule outputs that hold it")
    for path in outputs:
        leftover = path.replace(SOURCE_FIELD, "")
        if "{" in leftover or "}" in leftover or path.startswith("/") or ".." in Path(path).parts:
            raise CoverageError(
                f"{where}: output {path!r}; expected a relative path whose only field is {SOURCE_FIELD}"
            )
        if is_released_path(path) == (SOURCE_FIELD in path):
            raise CoverageError(
                f"{where}: output {path!r}; expected either {SOURCE_FIELD} in it or a path under {RELEASED_ROOT}"
            )
    if status == "world" and not any(SOURCE_FIELD in p for p in outputs):
        raise CoverageError(f"{where}: a world item names no {SOURCE_FIELD} output (only {outputs})")
    if status == "released" and not all(is_released_path(p) for p in outputs):
        raise CoverageError(f"{where}: a released item names outputs outside {RELEASED_ROOT}: {outputs}")


def read_coverage(path: str | Path, paper: str) -> tuple[CoverageItem, ...]:
    """Read and validate one coverage.csv; every error names the file and the line."""
    path = Path(path)
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        if tuple(reader.fieldnames or ()) != COLUMNS:
            raise CoverageError(f"{path}: columns {reader.fieldnames}; expected {list(COLUMNS)}")
        items: list[CoverageItem] = []
        seen: dict[str, int] = {}
        for line, record in enumerate(reader, start=2):
            where = f"{path}:{line}"
            if None in record or any(v is None for v in record.values()):
                raise CoverageError(f"{where}: expected {len(COLUMNS)} fields ({', '.join(COLUMNS)})")
            item, title, status = record["item"].strip(), record["title"].strip(), record["status"].strip()
            reason = record["reason"].strip()
            if not item or not title:
                raise CoverageError(f"{where}: empty item or title; expected both")
            if item in seen:
                raise CoverageError(f"{where}: item {item!r} is already on line {seen[item]}")
            seen[item] = line
            if status not in STATUSES:
                raise CoverageError(f"{where}: status {status!r}; expected one of {', '.join(STATUSES)}")
            if status not in REGENERATED and not reason:
                raise CoverageError(f"{where}: {item} is {status!r} without a reason; expected one line saying why")
            if "\n" in reason or "\n" in title:
                raise CoverageError(f"{where}: a title or reason over several lines; expected one line")
            patterns = [p.strip() for p in record["outputs"].split(";") if p.strip()]
            outputs = [p for pattern in patterns for p in expand_alternatives(pattern)]
            _check_outputs(f"{where} ({item})", status, outputs)
            items.append(CoverageItem(paper, item, title, status, tuple(outputs), reason))
    if not items:
        raise CoverageError(f"{path}: no items")
    return tuple(items)


@cache
def load_coverage(paper: str) -> tuple[CoverageItem, ...]:
    """A paper's coverage matrix from its package, validated."""
    return read_coverage(coverage_path(paper), paper)


def status_counts(items: tuple[CoverageItem, ...]) -> dict[str, int]:
    """Items per status, every status present (0 where none), in `STATUSES` order."""
    return {s: sum(i.status == s for i in items) for s in STATUSES}


def coverage_outputs(paper: str, source: str, released: bool = True) -> list[str]:
    """Every output path a paper's regenerated items name, for one source (released ones when asked), in order."""
    return list(dict.fromkeys(p for i in load_coverage(paper) if i.regenerated for p in i.paths(source, released)))


def index_entries(source: str) -> list[PaperEntry]:
    """Every registered paper's section of reports/index.html: its title and coverage, files for `source`."""
    from itmbench.papers.registry import PAPERS

    return [
        PaperEntry(
            name,
            entry.title,
            tuple(
                CoverageRow(
                    item.item,
                    item.title,
                    item.status,
                    item.reason,
                    files=item.paths(source, released=False),
                    released_files=tuple(p for p in item.paths(source) if is_released_path(p)),
                )
                for item in load_coverage(name)
            ),
        )
        for name, entry in PAPERS.items()
    ]


__all__ = [
    "COLUMNS",
    "NUMBERED",
    "STATUSES",
    "CoverageError",
    "CoverageItem",
    "coverage_outputs",
    "coverage_path",
    "expand_alternatives",
    "index_entries",
    "is_released_path",
    "load_coverage",
    "read_coverage",
    "status_counts",
]
