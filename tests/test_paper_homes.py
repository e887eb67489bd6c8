"""Each paper's commands and workflow code live with the paper (issue 35.2): its `itmbench` subcommands in
`itmbench.papers.<paper>.commands` (found by the CLI through the registry), its rules in
workflow/rules/papers/<paper>.smk and its input functions in workflow/rules/helpers/papers/<paper>.smk. The
command lines (src/itmbench/cli) and the shared workflow files (the Snakefile, workflow/rules/*.smk,
workflow/rules/helpers/*.smk) name no registered paper."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from itmbench.papers.registry import PAPERS

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src" / "itmbench"

# Shared files that still name a paper today, and why: work for later. Delete an entry when its file names no paper
# (test_known_paper_names_are_still_there says when); never add one for new code.
KNOWN_PAPER_NAMES: dict[str, str] = {}


def paper_name_pattern(names) -> re.Pattern[str]:
    """A registered paper's name as a word of code or prose, any case: `bison`, `get_bison_table2`, `BISON's`,
    `data/world/aro`, never inside another word (`around`, `arose`, `paro`)."""
    alternatives = "|".join(sorted(map(re.escape, names), key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z0-9])(?:{alternatives})(?![A-Za-z])", re.IGNORECASE)


PAPER_NAME = paper_name_pattern(PAPERS)


def shared_files(repo: Path = REPO) -> list[Path]:
    """The command lines and the shared workflow files."""
    rules = repo / "workflow" / "rules"
    files = [*sorted((repo / "src" / "itmbench" / "cli").rglob("*.py")), repo / "Snakefile"]
    return files + sorted(rules.glob("*.smk")) + sorted((rules / "helpers").glob("*.smk"))


def paper_names_in(repo: Path = REPO) -> dict[str, list[str]]:
    """Shared file (relative path) -> its lines that name a registered paper."""
    found = {}
    for path in shared_files(repo):
        lines = enumerate(path.read_text().splitlines(), 1)
        hits = [f"{n}: {line.strip()}" for n, line in lines if PAPER_NAME.search(line)]
        if hits:
            found[path.relative_to(repo).as_posix()] = hits
    return found


def test_shared_files_name_no_paper() -> None:
    found = {path: lines for path, lines in paper_names_in().items() if path not in KNOWN_PAPER_NAMES}
    assert not found, "shared files naming a paper (move the code to the paper's own files):\n" + "\n".join(
        f"{path}:{line}" for path, lines in found.items() for line in lines[:5]
    )


def test_known_paper_names_are_still_there() -> None:
    """An entry of KNOWN_PAPER_NAMES whose file names no paper any more is to be deleted."""
    found = paper_names_in()
    gone = sorted(path for path in KNOWN_PAPER_NAMES if path not in found)
    assert not gone, f"these files name no paper now: delete them from KNOWN_PAPER_NAMES: {gone}"


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("from itmbench.papers.bison import canonical", True),
        ("def get_bison_table2_config(wildcards):", True),
        ("CxC's Figure 5", True),
        ('bench=f"{DATA}/aro/items.parquet"', True),
        ("MCIC-COCO", True),
        ("# around the arose paros, sugar crepes", False),
        ("the world's benchmarks", False),
    ],
)
def test_the_pattern_names_a_paper_as_a_word(text: str, named: bool) -> None:
    assert bool(PAPER_NAME.search(text)) is named


def test_each_paper_with_commands_has_its_module() -> None:
    """`Paper.commands` says exactly which paper packages have a `commands` module, each with `add_commands`."""
    have = {p.parent.name for p in (SRC / "papers").glob("*/commands.py")}
    assert have == {name for name, paper in PAPERS.items() if paper.commands}
    for name in sorted(have):
        assert callable(PAPERS[name].part("commands").add_commands)


def test_every_paper_command_is_in_the_parser() -> None:
    """The CLI's parser (the warm worker's too: it builds the same one) holds every paper's commands."""
    from itmbench.cli import build_parser

    names: list[str] = []
    for paper in PAPERS.values():
        if paper.commands:
            paper.add_commands(lambda n, func, help_: names.append(n) or _Sink(), None)
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    assert names and set(names) <= set(sub.choices)


class _Sink:
    """A subparser that takes every argument (for listing a paper's command names)."""

    def add_argument(self, *args, **kwargs):
        return None

    def add_mutually_exclusive_group(self, *args, **kwargs):
        return self

    def add_argument_group(self, *args, **kwargs):
        return self

    def set_defaults(self, **kwargs):
        return None
