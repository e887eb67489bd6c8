"""reports/index.html on hand-made inputs: claims counted, largest differences, coverage links that resolve."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from itmbench.cli import main
from itmbench.papers.coverage import STATUSES, index_entries, load_coverage, status_counts
from itmbench.papers.registry import PAPERS
from itmbench.report.index import DIFFERENCES_NOTE, claim_counts, largest_differences
from itmbench.report.render import write_index as render_index

TABLE_COLUMNS = [
    "table", "block", "row", "column", "value", "lo", "hi", "regenerated", "published", "difference",
    "decimals", "status", "note", "model",
]  # fmt: skip
# (row, column, world, published, difference, status): the cells of a hand-made world Table 3 of BISON
BISON_CELLS = [
    ("CLIP", "BISON", 91.08, 80.48, 10.6, "compared"),
    ("CLIP", "Image retrieval R@1", 6.8, 45.19, -38.39, "compared"),
    ("VSE", "BISON", 86.77, 85.89, 0.88, "compared"),
    ("VSE", "Image retrieval R@1", 2.2, 54.1, -51.9, "compared"),
    ("SCAN t2i", "BISON", None, 85.89, None, "not_regenerated"),
    ("random", "BISON", 52.77, None, None, "not_published"),
]


def _write_csv(path: Path, header: list[str], rows: list[list]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)
    return path


def _touch(path: Path) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x\n")
    return path.as_posix()


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """A run's folder with a few reports, a claims table, BISON's Table 3 and some of BISON's coverage files."""
    monkeypatch.chdir(tmp_path)
    reports = [_touch(Path(f"reports/world/{name}.html")) for name in ("retrieval", "bison", "eccv")]
    claims = _write_csv(
        Path("results/world/tables/claims/claims.csv"),
        ["paper", "claim", "text", "where", "source", "holds", "evidence", "reason"],
        [
            ["bison", "a", "A", "s1", "world", "True", "{}", ""],
            ["bison", "b", "B", "s2", "world", "False", "{}", ""],
            ["bison", "c", "C", "s3", "world", "", "{}", "no model"],
            ["eccv", "d", "D", "s4", "world", "True", "{}", ""],
            ["eccv", "e", "E", "s5", "world", "True", "{}", ""],
        ],
    )
    _touch(Path("results/world/tables/claims/claims.md"))
    released = _write_csv(
        Path("results/released/tables/claims/claims.csv"),
        ["paper", "claim", "text", "where", "source", "holds", "evidence", "reason"],
        [
            ["bison", "a", "A", "s1", "published", "True", "{}", ""],
            ["bison", "a", "A", "s1", "released", "", "{}", "BISON releases no model outputs"],
            ["bivlc", "f", "F", "s6", "released", "False", "{}", ""],
            ["bivlc", "f", "F", "s6", "published", "True", "{}", ""],
        ],
    )
    _touch(Path("results/released/tables/claims/claims.md"))
    rows = [
        ["Table 3", "", row, col, world, "", "", world, pub, diff, 2, status, "", row.lower()]
        for row, col, world, pub, diff, status in BISON_CELLS
    ]
    table = _write_csv(Path("results/world/tables/bison/table3.csv"), TABLE_COLUMNS, rows)
    artefacts = [
        table.as_posix(),
        _touch(Path("results/world/tables/bison/table3.md")),
        _touch(Path("results/world/tables/bison/table1.md")),
        _touch(Path("results/world/figures/bison/accuracy.png")),
        _touch(Path("results/world/figures/bison/accuracy.pdf")),
    ]
    return {
        "reports": reports,
        "claims": [claims.as_posix()],
        "released_claims": released.as_posix(),
        "tables": [table.as_posix()],
        "artefacts": artefacts,
    }


def write_index(out: str, reports: list[str], **kwargs) -> None:
    """The index as the command writes it: every registered paper, its coverage for the world source."""
    render_index(out, reports, papers=index_entries("world"), statuses=STATUSES, **kwargs)


def _section(html: str, paper: str) -> str:
    match = re.search(rf'<section id="{paper}">(.*?)</section>', html, re.S)
    assert match, paper
    return match[1]


def test_every_link_resolves_and_every_paper_has_a_section(tree, tmp_path):
    write_index("reports/index.html", tree["reports"], claims=tree["claims"], tables=tree["tables"],
                artefacts=tree["artefacts"], source="world")  # fmt: skip
    html = (tmp_path / "reports/index.html").read_text()
    hrefs = re.findall(r'href="([^"]*)"', html)
    assert hrefs
    for href in hrefs:
        if href.startswith("#"):
            assert f'id="{href[1:]}"' in html, href
        else:
            assert (tmp_path / "reports" / href).resolve().is_file(), href
    for paper in PAPERS:
        _section(html, paper)
    assert 'href="world/retrieval.html"' in html and 'href="world/bison.html"' in html
    assert 'href="../results/world/figures/bison/accuracy.png"' in html
    assert 'href="../results/world/tables/bison/table1.md"' in html
    # a file this run did not build is named, not linked
    assert "table1.csv" not in hrefs and 'href="../results/world/tables/bison/table1.csv"' not in html
    assert "table2 (not built by this run)" in _section(html, "bison")
    assert "no report in this run" in _section(html, "mcic")


def test_claims_are_counted_per_paper_and_verdict(tree, tmp_path):
    assert claim_counts(*tree["claims"]) == {
        "world": {
            "bison": {"holds": 1, "does not hold": 1, "undecided": 1},
            "eccv": {"holds": 2, "does not hold": 0, "undecided": 0},
        }
    }
    write_index("reports/index.html", tree["reports"], claims=tree["claims"], tables=tree["tables"],
                artefacts=tree["artefacts"])  # fmt: skip
    html = (tmp_path / "reports/index.html").read_text()
    assert "3 claims checked on the world results: holds 1, does not hold 1, undecided 1." in _section(html, "bison")
    assert "2 claims checked on the world results: holds 2, does not hold 0, undecided 0." in _section(html, "eccv")
    assert "No claims of this paper are checked on the world results." in _section(html, "sugarcrepe")
    glance = html.split("<h2>Reports</h2>")[0]
    counts = status_counts(load_coverage("bison"))
    bison_row = re.search(r'<tr><td><a href="#bison">.*?</tr>', glance)[0]
    cells = re.findall(r'<td class="num">([^<]*)</td>', bison_row)
    assert cells == ["1 / 1 / 1", *(str(n) for n in counts.values())]


def test_the_world_and_the_released_files_claims_are_shown_side_by_side(tree, tmp_path):
    both = [*tree["claims"], tree["released_claims"]]
    assert claim_counts(*both)["released"] == {
        "bison": {"holds": 0, "does not hold": 0, "undecided": 1},
        "bivlc": {"holds": 0, "does not hold": 1, "undecided": 0},
    }
    write_index("reports/index.html", tree["reports"], claims=both, tables=tree["tables"],
                artefacts=tree["artefacts"])  # fmt: skip
    html = (tmp_path / "reports/index.html").read_text()
    glance = html.split("<h2>Reports</h2>")[0]
    headers = re.findall(r"<th>claims on the ([a-z]+):", glance)
    assert headers == ["world", "released", "published"]  # the run's source first, then the released files'
    bivlc_row = re.search(r'<tr><td><a href="#bivlc">.*?</tr>', glance)[0]
    assert re.findall(r'<td class="num">([^<]*)</td>', bivlc_row)[:3] == ["–", "0 / 1 / 0", "1 / 0 / 0"]
    section = _section(html, "bivlc")
    assert "1 claim checked on the released results: holds 0, does not hold 1, undecided 0." in section
    assert 'href="../results/released/tables/claims/claims.md"' in section
    assert "No claims of this paper are checked on the world results." in section
    bad = _write_csv(tmp_path / "old.csv", ["paper", "claim", "holds"], [["bison", "a", "True"]])
    with pytest.raises(ValueError, match=r"old.csv: no columns \['source'\]"):
        claim_counts(bad)


def test_the_three_largest_absolute_differences_are_shown_in_order(tree, tmp_path):
    top = largest_differences(tree["tables"])["bison"]
    assert [(d.row, d.column, d.difference) for d in top] == [
        ("VSE", "Image retrieval R@1", -51.9),
        ("CLIP", "Image retrieval R@1", -38.39),
        ("CLIP", "BISON", 10.6),
    ]
    write_index("reports/index.html", tree["reports"], claims=tree["claims"], tables=tree["tables"],
                artefacts=tree["artefacts"])  # fmt: skip
    section = _section((tmp_path / "reports/index.html").read_text(), "bison")
    assert DIFFERENCES_NOTE in section
    shown = re.findall(r'<td class="num">([^<]*)</td>', section.split("<h3>Coverage</h3>")[0])
    assert shown == ["2.20", "54.10", "-51.90", "6.80", "45.19", "-38.39", "91.08", "80.48", "+10.60"]
    assert "0.88" not in section
    assert 'href="../results/world/tables/bison/table3.md"' in section  # the cell links its table
    assert "No cell of this paper's world tables" in _section((tmp_path / "reports/index.html").read_text(), "mcic")


def test_the_coverage_matrix_lists_every_item_with_its_status(tree, tmp_path):
    write_index("reports/index.html", tree["reports"], artefacts=tree["artefacts"])
    html = (tmp_path / "reports/index.html").read_text()
    for paper in PAPERS:
        section = _section(html, paper)
        for item in load_coverage(paper):
            assert f'<td class="s-{item.status.replace(" ", "-")}">{item.status}</td>' in section
        assert section.count("<tr><td>") >= len(load_coverage(paper))


def test_same_inputs_give_the_same_bytes_and_the_command_writes_it(tree, tmp_path):
    args = ["index", *tree["reports"], "--claims", *tree["claims"], "--tables", *tree["tables"],
            "--artefacts", *tree["artefacts"], "--source", "world"]  # fmt: skip
    assert main([*args, "--out", "reports/index.html"]) == 0
    assert main([*args, "--out", "reports/again.html"]) == 0
    assert (tmp_path / "reports/index.html").read_bytes() == (tmp_path / "reports/again.html").read_bytes()


def test_a_table_without_the_comparison_columns_is_named(tmp_path):
    bad = _write_csv(tmp_path / "t" / "table1.csv", ["table", "row", "value"], [["Table 1", "a", 1]])
    with pytest.raises(ValueError, match=r"table1.csv: no columns .*regenerated"):
        largest_differences([bad])
