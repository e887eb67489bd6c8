"""Each paper's coverage matrix (papers/<paper>/coverage.csv): valid, complete against the paper and the registry;
and each paper's recipe (papers/<paper>/published_recipe.csv): every cell printed in the paper's text, every cell on
the paper's docs page."""

from __future__ import annotations

import csv
import os
import re
import shlex
from pathlib import Path

import pytest

from itmbench.papers import statistics as paper_statistics
from itmbench.papers.coverage import (
    NUMBERED,
    STATUSES,
    CoverageError,
    coverage_outputs,
    expand_alternatives,
    index_entries,
    load_coverage,
    read_coverage,
    status_counts,
)
from itmbench.papers.published import load_published
from itmbench.papers.registry import PAPERS
from itmbench.papers.world import world_table_paths
from itmbench.papers.world_figures import world_figure_paths
from itmbench.report import snippets

REPO = Path(__file__).resolve().parents[2]
# The papers' texts (../shared/seeds beside the clone; a user's clone has none), one file per paper.
SEED_FILES = {
    "bison": "000_d5590c74fb82ccab.txt",
    "mcic": "001_8339c691fda0ea92.txt",
    "eccv": "002_83104903c907121a.txt",
    "bivlc": "003_f247ad34b2310c7d.txt",
    "cxc": "004_ab7cfc1aa0d4123d.txt",
}
# SugarCrepe's own paper is not among the texts: its recipe cites what BiVLC's paper says of it.
RECIPE_TEXTS = {**SEED_FILES, "sugarcrepe": SEED_FILES["bivlc"]}
RECIPE_HEADER = ["table", "row", "column", "value", "source"]
# A recipe cell's source: where in the paper, then the paper's words in brackets, verbatim.
RECIPE_SOURCE = re.compile(r"(?P<where>[^(]+) \((?P<quote>.+)\)")
RECIPE_NUMBER = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?(?:e-?\d+)?")
LIGATURES = {"ﬁ": "fi", "ﬂ": "fl", "ﬀ": "ff", "ﬃ": "ffi"}
MENTION = re.compile(r"\b(Table|Figure)s?\s+((?:[A-Z]\.)?\d+)")


def find_seeds() -> Path | None:
    """The papers' texts: $ITMBENCH_SEEDS, else ../shared/seeds beside the clone."""
    env = os.environ.get("ITMBENCH_SEEDS")
    for path in [Path(env)] if env else [REPO.parent / "shared" / "seeds"]:
        if path.is_dir():
            return path
    return None


@pytest.fixture(scope="module")
def seeds() -> Path:
    path = find_seeds()
    if path is None:
        pytest.skip("the papers' texts are not here (set ITMBENCH_SEEDS or put shared/seeds beside the clone)")
    return path


def normalise(text: str) -> str:
    """Text as compared with a caption: LaTeX arrows and typographic quotes as plain ones, no markup."""
    text = text.replace("\\rightarrow", "→").replace("\\leftrightarrow", "↔")
    text = re.sub(r"[’‘]", "'", re.sub(r"[“”]", '"', text))
    return re.sub(r"\s+", " ", re.sub(r"[*{}$]", "", text)).strip().lower()


def printed(text: str) -> str:
    """Text as a recipe cell is compared with the paper's: normalised, ligatures and LaTeX powers of ten spelt out
    (2 \\times 10^{-4} -> 2e-4, 10^{-3} -> 1e-3), the extraction's spaced thousands (3, 000, 000) closed."""
    for ligature, letters in LIGATURES.items():
        text = text.replace(ligature, letters)
    text = normalise(text)
    text = re.sub(r"(\d+(?:\.\d+)?)\s*\\times\s*10\^(-?\d+)", r"\1e\2", text)
    text = re.sub(r"(?<![\d.])10\^(-?\d+)", r"1e\1", text)
    return re.sub(r"(?<=\d), (?=\d{3}\b)", ",", text)


def read_recipe(paper: str) -> list[dict[str, str]]:
    """A paper's published_recipe.csv (table,row,column,value,source), one dict a cell."""
    path = REPO / "src" / "itmbench" / "papers" / paper / "published_recipe.csv"
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        assert reader.fieldnames == RECIPE_HEADER, path
        return list(reader)


def recipe_problems(cells: list[dict[str, str]], text: str) -> list[str]:
    """Why each cell is not backed by the paper's text: its quote is not the paper's words, or its value (each
    number of it, or its words) is not in the quote."""
    texts = (printed(text), printed(re.sub(r"(?<=[a-z])-\n(?=[a-z])", "", text)))  # also with line-end hyphens joined
    problems, seen = [], set()
    for cell in cells:
        key = (cell["table"], cell["row"], cell["column"])
        source = RECIPE_SOURCE.fullmatch(cell["source"])
        if key in seen or source is None:
            problems.append(f"{key}: {'given twice' if key in seen else 'source is not: where (the words)'}")
            continue
        seen.add(key)
        quote, value = printed(source["quote"]), printed(cell["value"])
        if not any(quote in t for t in texts):
            problems.append(f"{key}: the paper does not print {source['quote']!r}")
        numbers = RECIPE_NUMBER.findall(value)
        if numbers and not set(numbers) <= set(RECIPE_NUMBER.findall(quote)) or not numbers and value not in quote:
            problems.append(f"{key}: value {cell['value']!r} is not in {source['quote']!r}")
    return problems


@pytest.mark.parametrize("paper", list(RECIPE_TEXTS))
def test_every_recipe_cell_is_printed_in_the_papers_text(paper, seeds):
    cells = read_recipe(paper)
    assert cells, paper
    assert recipe_problems(cells, (seeds / RECIPE_TEXTS[paper]).read_text(encoding="utf-8")) == []


def test_a_recipe_cell_the_text_does_not_back_is_named():
    text = "We fine-tune for 10 epochs at a learning rate of $2 \\times 10^{-4}$ with a batch size of 128."
    cell = {"table": "appendix", "row": "lr", "column": "paper", "value": "2e-4"}
    good = {**cell, "source": "appendix (a learning rate of $2 \\times 10^{-4}$ with a batch size of 128)"}
    assert recipe_problems([good], text) == []
    (wrong,) = recipe_problems([{**good, "value": "3e-4"}], text)
    assert wrong.startswith("('appendix', 'lr', 'paper'): value '3e-4' is not in")
    unprinted = {**cell, "value": "10", "source": "appendix (for 12 epochs)"}
    assert [p.split(": ", 1)[1] for p in recipe_problems([unprinted], text)] == [
        "the paper does not print 'for 12 epochs'",
        "value '10' is not in 'for 12 epochs'",
    ]
    assert "source is not" in recipe_problems([{**cell, "source": "appendix"}], text)[0]
    assert recipe_problems([good, good], text) == ["('appendix', 'lr', 'paper'): given twice"]


@pytest.mark.parametrize("paper", list(RECIPE_TEXTS))
def test_every_recipe_cell_is_on_the_papers_docs_page(paper):
    page = REPO / "docs" / f"{paper}.md"
    path = f"src/itmbench/papers/{paper}/published_recipe.csv"
    quoted = set()
    for s in snippets.find_snippets(page.read_text(), page):
        if s.spec.startswith(f"published-cell {path} "):
            opts = dict(word.split("=", 1) for word in shlex.split(s.spec) if "=" in word)
            quoted.add((opts.get("table"), opts.get("row")))
    missing = [(c["table"], c["row"]) for c in read_recipe(paper) if (c["table"], c["row"]) not in quoted]
    assert missing == [], f"{page.name}: no published-cell snippet for {missing}"


@pytest.mark.parametrize("paper", list(PAPERS))
def test_every_paper_has_a_coverage_matrix_with_something_regenerated(paper):
    items = load_coverage(paper)
    counts = status_counts(items)
    assert sum(counts.values()) == len(items) and list(counts) == list(STATUSES)
    assert counts["world"] >= 1, paper
    for item in items:
        assert item.regenerated == bool(item.outputs), item
        assert item.regenerated or item.reason, item


@pytest.mark.parametrize("paper", [p for p, entry in PAPERS.items() if entry.world_tables])
def test_every_world_table_and_figure_the_registry_writes_is_in_the_papers_coverage(paper):
    outputs = set(coverage_outputs(paper, "{source}", released=False))
    written = [
        *world_table_paths(paper, f"results/{{source}}/tables/{paper}"),
        *world_figure_paths(paper, f"results/{{source}}/figures/{paper}"),
    ]
    assert written and set(written) <= outputs, sorted(set(written) - outputs)


@pytest.mark.parametrize("paper", paper_statistics.PAPERS)
def test_released_statistics_are_in_the_papers_coverage(paper):
    outputs = set(coverage_outputs(paper, "world"))
    expected = {f"results/released/tables/statistics/{paper}.{ext}" for ext in ("csv", "md", "tex")}
    assert expected <= outputs, paper


@pytest.mark.parametrize("paper", list(PAPERS))
def test_every_transcribed_table_is_an_item_and_every_transcribed_item_has_its_numbers(paper):
    items = {i.item: i for i in load_coverage(paper)}
    tables = set(load_published(paper)["table"])
    if paper in paper_statistics.PAPERS:
        stats = paper_statistics.read_published(paper_statistics.published_path(paper))["table"]
        named = {re.sub(r"^appendix ", "Appendix ", t) for t in stats}
        tables |= {t for t in named if NUMBERED.match(t)}
    assert tables <= set(items), sorted(tables - set(items))
    transcribed = {name for name, i in items.items() if i.status == "transcribed"}
    assert transcribed <= tables, sorted(transcribed - tables)


def test_sugarcrepes_items_are_items_of_bivlcs_paper():
    bivlc = {i.item for i in load_coverage("bivlc")}
    for item in load_coverage("sugarcrepe"):
        if item.item.startswith("BiVLC "):
            assert item.item.removeprefix("BiVLC ") in bivlc, item.item


@pytest.mark.parametrize("paper", list(SEED_FILES))
def test_coverage_lists_every_table_and_figure_the_paper_mentions(paper, seeds):
    text = (seeds / SEED_FILES[paper]).read_text(encoding="utf-8")
    mentioned = {f"{kind} {number}" for kind, number in MENTION.findall(text)}
    items = load_coverage(paper)
    numbered = {i.item for i in items if NUMBERED.match(i.item)}
    # an appendix that numbers its own (CxC's) is named "Appendix Table 1": its mentions read "Table 1"
    assert mentioned <= numbered, sorted(mentioned - numbered)
    assert {n.removeprefix("Appendix ") for n in numbered} <= mentioned
    caption_text = normalise(text)
    for item in items:
        if NUMBERED.match(item.item):
            name = normalise(item.item.removeprefix("Appendix "))
            start = normalise(" ".join(item.title.split()[:4]))
            assert re.search(re.escape(name) + r"[:.] " + re.escape(start), caption_text), (item.item, start)


def test_expand_alternatives_keeps_the_source_field():
    assert expand_alternatives("results/{source}/t/x.{csv,md}") == [
        "results/{source}/t/x.csv",
        "results/{source}/t/x.md",
    ]
    assert expand_alternatives("a{1,2}b{x,y}") == ["a1bx", "a1by", "a2bx", "a2by"]
    assert expand_alternatives("plain.csv") == ["plain.csv"]


def test_paths_of_an_item_fill_the_source_and_leave_out_released_ones_when_asked():
    (item,) = [i for i in load_coverage("bivlc") if i.item == "Table 2"]
    assert "results/coco/tables/bivlc/table2.md" in item.paths("coco")
    assert "results/released/tables/bivlc/table2_released.md" in item.paths("coco")
    assert not any(p.startswith("results/released/") for p in item.paths("coco", released=False))


HEADER = "item,title,status,outputs,reason\n"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("Table 1,A title,regenerated,,", "status 'regenerated'; expected one of world, released"),
        ("Table 1,A title,missing,,", "without a reason"),
        ("Table 1,A title,not possible,results/{source}/a.csv,why", "names outputs"),
        ("Table 1,A title,world,,", "names no outputs"),
        ("Table 1,A title,world,results/released/a.csv,", "names no {source} output"),
        ("Table 1,A title,released,results/{source}/a.csv,", "outside results/released/"),
        ("Table 1,A title,world,results/world/a.csv,", "either {source} in it or a path under results/released/"),
        ("Table 1,A title,world,results/{source}/{paper}.csv,", "whose only field is {source}"),
        ("Table 1,,world,results/{source}/a.csv,", "empty item or title"),
        ("Table 1,A title,world", "expected 5 fields"),
    ],
)
def test_a_bad_line_is_named_with_what_was_expected(tmp_path, line, message):
    path = tmp_path / "coverage.csv"
    path.write_text(HEADER + line + "\n")
    with pytest.raises(CoverageError, match=re.escape(message)) as err:
        read_coverage(path, "bison")
    assert f"{path}:2" in str(err.value)


def test_a_repeated_item_and_wrong_columns_are_named(tmp_path):
    path = tmp_path / "coverage.csv"
    path.write_text(HEADER + "Table 1,A,transcribed,,why\nTable 1,B,transcribed,,why\n")
    with pytest.raises(CoverageError, match=r"coverage.csv:3: item 'Table 1' is already on line 2"):
        read_coverage(path, "bison")
    path.write_text("item,title,status\nTable 1,A,world\n")
    with pytest.raises(CoverageError, match="expected \\['item', 'title', 'status', 'outputs', 'reason'\\]"):
        read_coverage(path, "bison")


def test_a_valid_file_reads_into_items(tmp_path):
    path = tmp_path / "coverage.csv"
    path.write_text(HEADER + 'Table 1,A,world,"results/{source}/t/a.{csv,md};results/released/t/a.csv",\n')
    (item,) = read_coverage(path, "bison")
    assert item.outputs == ("results/{source}/t/a.csv", "results/{source}/t/a.md", "results/released/t/a.csv")
    assert item.paths("world", released=False) == ("results/world/t/a.csv", "results/world/t/a.md")


def test_an_unknown_paper_is_named():
    with pytest.raises(KeyError, match="unknown paper 'bisson'"):
        load_coverage("bisson")


def test_index_entries_give_every_paper_its_items_and_files_for_the_source():
    entries = {entry.name: entry for entry in index_entries("coco")}
    assert list(entries) == list(PAPERS)
    (row,) = [r for r in entries["bivlc"].coverage if r.item == "Table 2"]
    assert "results/coco/tables/bivlc/table2.csv" in row.files
    assert row.released_files and all(p.startswith("results/released/") for p in row.released_files)
    assert entries["bison"].counts(STATUSES) == status_counts(load_coverage("bison"))
