"""`itmbench diff-results`: two runs' tables and metrics compared cell by cell, against a naive reference."""

from __future__ import annotations

import csv
import io
import math
import random
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from itmbench import cli
from itmbench.report import diff as rdiff
from itmbench.report.diff import Cell, cell_status, diff_results
from itmbench.report.tables import write_table

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "data" / "results_diff"
OLD, NEW = FIXTURE / "old", FIXTURE / "new"
# the example in docs/outputs.md: this command's output, run from the repository root
EXAMPLE = FIXTURE / "report.md"
EXAMPLE_ARGS = ["diff-results", "tests/data/results_diff/old", "tests/data/results_diff/new"]
NAN = math.nan


def run(*argv: str) -> int:
    """The exit status of `itmbench ARGV` (the diff's own statuses leave through SystemExit)."""
    try:
        return cli.main(list(argv))
    except SystemExit as exit_:
        return int(exit_.code)


def changes(d: rdiff.Diff) -> set[tuple[str, str, str, str]]:
    return {(c.file, c.row, c.column, c.status) for c in d.changes}


# --- the definition, cell by cell ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        # both values inside both intervals
        (Cell(75.0, 71.2, 78.5), Cell(76.0, 72.1, 79.5), "changed"),
        # the new value outside the old interval
        (Cell(68.4, 64.3, 72.3), Cell(74.8, 70.9, 78.4), "beyond"),
        # the new value inside the old interval, the old value outside the (narrower) new one
        (Cell(75.0, 70.0, 80.0), Cell(79.0, 78.5, 79.5), "beyond"),
        # an end of the interval is inside
        (Cell(75.0, 71.0, 79.0), Cell(79.0, 75.0, 83.0), "changed"),
        # an interval on one side only: judged by that one
        (Cell(75.0, 71.0, 79.0), Cell(78.0), "changed"),
        (Cell(75.0, 71.0, 79.0), Cell(80.0), "beyond"),
        # no interval: any change beyond the tolerance
        (Cell(500.0), Cell(498.0), "beyond"),
        (Cell(500.0), Cell(500.0 * (1 + 1e-12)), None),
        (Cell(75.0, 71.2, 78.5), Cell(75.0 * (1 + 1e-12), 71.2, 78.5), None),
        # the value equal, the interval changed
        (Cell(75.0, 71.2, 78.5), Cell(75.0, 71.0, 78.5), "changed"),
        # NaN is no value: NaN == NaN, and a value appearing or vanishing is added or removed
        (Cell(NAN, NAN, NAN), Cell(NAN, NAN, NAN), None),
        (Cell(NAN), Cell(30.5, 26.6, 34.7), "added"),
        (Cell(30.5, 26.6, 34.7), Cell(NAN), "removed"),
        # a text field of the cell (a note) changed
        (Cell(NAN, fields=(("note", "a"),)), Cell(NAN, fields=(("note", "b"),)), "changed"),
        # attributes (a count beside a metric, a claim's field) are never beyond
        (Cell(375.0, measured=False), Cell(380.0, measured=False), "changed"),
        (Cell(text="True", measured=False), Cell(text="False", measured=False), "changed"),
        (Cell(text="True", measured=False), Cell(text="True", measured=False), None),
    ],
)
def test_cell_status_follows_the_definition(old: Cell, new: Cell, expected: str | None) -> None:
    assert cell_status(old, new) == expected


def test_the_tolerance_is_relative() -> None:
    assert cell_status(Cell(1000.0), Cell(1000.0 + 1e-7)) is None  # 1e-10 relative
    assert cell_status(Cell(1000.0), Cell(1000.0 + 1e-5)) == "beyond"  # 1e-8 relative
    assert cell_status(Cell(1000.0), Cell(1000.0 + 1e-5), rel_tol=1e-6) is None


# --- against a naive reference on random long tables ---------------------------------------------


def _random_table(rng: random.Random) -> pd.DataFrame:
    rows = []
    for r in ("clip", "coca", "random", "vse"):
        for c in ("I2T", "T2I", "group"):
            if rng.random() < 0.15:
                continue  # the cell is absent
            v = NAN if rng.random() < 0.1 else rng.randrange(0, 200) / 2
            width = (rng.randrange(1, 8) / 2, rng.randrange(1, 8) / 2) if rng.random() < 0.7 else (NAN, NAN)
            rows.append((r, c, v, v - width[0], v + width[1]))
    return pd.DataFrame(rows, columns=["row", "column", "value", "lo", "hi"])


def _perturbed(table: pd.DataFrame, rng: random.Random) -> pd.DataFrame:
    out = table.copy()
    for i in out.index:
        if rng.random() < 0.5:
            continue
        shift = rng.randrange(-6, 7) / 2
        out.loc[i, ["value", "lo", "hi"]] = out.loc[i, ["value", "lo", "hi"]] + shift
        if rng.random() < 0.3:
            out.loc[i, "hi"] = out.loc[i, "hi"] + 0.5
        if rng.random() < 0.1:  # a value vanishes, or one appears where there was none
            v = NAN if not math.isnan(out.loc[i, "value"]) else 50.0
            out.loc[i, ["value", "lo", "hi"]] = [v, v - 1, v + 1]
    drop = [i for i in out.index if rng.random() < 0.1]
    added = pd.DataFrame(
        [("ffnn", c, 40.0, 38.5, 41.5) for c in ("I2T", "T2I") if rng.random() < 0.5], columns=out.columns
    )
    return pd.concat([out.drop(index=drop), added], ignore_index=True)


def naive_statuses(old: pd.DataFrame, new: pd.DataFrame) -> set[tuple[str, str, str]]:
    """The definition written out directly on two long tables of grid values (exact comparisons suffice)."""
    merged = old.merge(new, on=["row", "column"], how="outer", suffixes=("_o", "_n"), indicator="side")
    out = set()
    for r in merged.itertuples(index=False):
        if r.side == "left_only":
            out.add((r.row, r.column, "removed"))
            continue
        if r.side == "right_only":
            out.add((r.row, r.column, "added"))
            continue
        vo, vn = r.value_o, r.value_n
        if math.isnan(vo) and math.isnan(vn):
            status = None
        elif math.isnan(vo):
            status = "added"
        elif math.isnan(vn):
            status = "removed"
        elif vo != vn:
            has_o = not (math.isnan(r.lo_o) or math.isnan(r.hi_o))
            has_n = not (math.isnan(r.lo_n) or math.isnan(r.hi_n))
            outside_o = has_o and not (r.lo_o <= vn <= r.hi_o)
            outside_n = has_n and not (r.lo_n <= vo <= r.hi_n)
            status = "beyond" if (not has_o and not has_n) or outside_o or outside_n else "changed"
        else:
            same = all((math.isnan(a) and math.isnan(b)) or a == b for a, b in ((r.lo_o, r.lo_n), (r.hi_o, r.hi_n)))
            status = None if same else "changed"
        if status:
            out.add((r.row, r.column, status))
    return out


@pytest.mark.parametrize("seed", range(25))
def test_long_tables_match_the_naive_reference(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    old = _random_table(rng)
    new = _perturbed(old, rng)
    for side, table in (("a", old), ("b", new)):
        write_table(table, tmp_path / side / "tables" / "bench" / "bench", "a table")
    d = diff_results(str(tmp_path / "a"), str(tmp_path / "b"))
    got = {(c.row, c.column, c.status) for c in d.changes}
    assert got == naive_statuses(old, new)
    statuses = {s for _, _, s in got}
    assert d.exit_status == (4 if "beyond" in statuses else 1 if got else 0)


# --- the fixture: hand-made tables in the writers' formats ---------------------------------------


@pytest.mark.parametrize(
    "path", sorted(p for p in FIXTURE.rglob("*.csv") if "claims" not in p.parts), ids=lambda p: str(p)
)
def test_the_fixture_tables_are_what_write_table_writes(tmp_path: Path, path: Path) -> None:
    long = pd.read_csv(path, keep_default_na=True)
    write_table(long, tmp_path / "t", "title")
    assert (tmp_path / "t.csv").read_bytes() == path.read_bytes()


def test_identical_trees_exit_0_with_an_empty_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(OLD, tmp_path / "copy")
    (tmp_path / "copy" / "tables" / "bison" / "bison.md").write_text("only the CSVs and the JSONs are compared\n")
    assert run("diff-results", str(OLD), str(tmp_path / "copy"), "--csv", str(tmp_path / "d.csv")) == 0
    out = capsys.readouterr().out
    assert "No differences" in out and "|" not in out
    assert (tmp_path / "d.csv").read_text() == ",".join(rdiff.CSV_COLUMNS) + "\n"


def test_the_fixture_changes_inside_beyond_added_and_removed() -> None:
    d = diff_results(str(OLD), str(NEW))
    got = changes(d)
    expected = {
        # inside both intervals, beyond the old one, a count without an interval
        ("tables/bison/bison.csv", "clip", "bison", "changed"),
        ("tables/bison/bison.csv", "vse", "bison", "beyond"),
        ("tables/bison/audit.csv", "items", "count", "beyond"),
        # a row, a column and a value (NaN before) added; a table added, one removed
        ("tables/bison/bison.csv", "coca", "bison", "added"),
        ("tables/bivlc/bivlc.csv", "clip", "group", "added"),
        ("tables/bivlc/bivlc.csv", "clip_trohn_img", "group", "added"),
        ("tables/bivlc/bivlc.csv", "clip_trohn_img", "T2I", "added"),
        ("tables/sugarcrepe/sugarcrepe.csv", "", "", "added"),
        ("tables/cxc/cxc.csv", "", "", "removed"),
        # the claims: records keyed by (paper, claim)
        ("tables/claims/claims.csv", "bison / best_above_chance", "evidence", "changed"),
        ("tables/claims/claims.csv", "bison / clip_beats_vse", "evidence", "changed"),
        ("tables/claims/claims.csv", "bivlc / trohn_img_helps_t2i", "evidence", "changed"),
        ("tables/claims/claims.csv", "bivlc / trohn_img_helps_t2i", "holds", "changed"),
        ("tables/claims/claims.csv", "bivlc / trohn_img_helps_t2i", "reason", "changed"),
        # metrics: a value inside, one beyond, and the counts beside them (attributes)
        ("metrics/bison/clip.json", "metrics", "bison", "changed"),
        ("metrics/bison/clip.json", "", "mean_score_margin", "changed"),
        ("metrics/bison/clip.json", "", "n_correct", "changed"),
        ("metrics/bison/vse.json", "metrics", "bison", "beyond"),
        ("metrics/bison/vse.json", "", "mean_score_margin", "beyond"),
        ("metrics/bison/vse.json", "", "n_correct", "changed"),
    }
    assert got == expected
    # unchanged: random's BISON cell, the NaN == NaN cell of random's T2I, the status row's note
    assert not any(c.row in ("random", "bow") for c in d.changes)
    assert (d.tables, d.metrics, d.exit_status) == (6, 2, 4)
    assert d.changes == sorted(d.changes, key=lambda c: c.file) and len(d.changes) == len(expected)


def test_reversed_sides_swap_added_and_removed_and_keep_the_rest() -> None:
    swap = {"added": "removed", "removed": "added"}
    forward = changes(diff_results(str(OLD), str(NEW)))
    backward = changes(diff_results(str(NEW), str(OLD)))
    assert backward == {(f, r, c, swap.get(s, s)) for f, r, c, s in forward}


def test_cells_of_one_file_are_sorted_and_the_report_is_deterministic(tmp_path: Path) -> None:
    d = diff_results(str(OLD), str(NEW))
    for name in {c.file for c in d.changes}:
        keys = [(c.row, c.column) for c in d.changes if c.file == name]
        assert len(keys) == len(set(keys))
    assert rdiff.markdown(d) == rdiff.markdown(diff_results(str(OLD), str(NEW)))
    rows = list(csv.DictReader(io.StringIO(rdiff.csv_text(d))))
    assert [r["file"] for r in rows] == sorted(r["file"] for r in rows)
    vse = next(r for r in rows if r["file"] == "tables/bison/bison.csv" and r["row"] == "vse")
    assert (float(vse["old"]), float(vse["new_hi"]), vse["status"]) == (68.4, 78.4, "beyond")
    assert float(vse["difference"]) == pytest.approx(74.8 - 68.4)


def test_the_docs_example_is_the_commands_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(REPO)
    assert run(*EXAMPLE_ARGS) == 4
    printed = capsys.readouterr().out
    assert printed == EXAMPLE.read_text(), (
        "tests/data/results_diff/report.md is stale: run `itmbench "
        + " ".join(EXAMPLE_ARGS)
        + " --out tests/data/results_diff/report.md`, then python -m itmbench.report.snippets --update"
    )
    assert run(*EXAMPLE_ARGS, "--out", str(tmp_path / "r.md"), "--csv", str(tmp_path / "r.csv")) == 4
    assert (tmp_path / "r.md").read_text() == printed and capsys.readouterr().out == ""
    assert (tmp_path / "r.csv").read_text() == rdiff.csv_text(diff_results(*EXAMPLE_ARGS[1:]))


def test_exit_1_when_nothing_moved_beyond_its_interval(tmp_path: Path) -> None:
    for side in ("a", "b"):
        shutil.copytree(OLD / "tables" / "bison", tmp_path / side / "tables" / "bison")
    table = tmp_path / "b" / "tables" / "bison" / "bison.csv"
    table.write_text(table.read_text().replace("clip,bison,75.0,71.2,78.5", "clip,bison,76.0,72.1,79.5"))
    assert run("diff-results", str(tmp_path / "a"), str(tmp_path / "b")) == 1


# --- sides: folders and revisions ----------------------------------------------------------------


def test_a_checkout_root_is_narrowed_to_the_source_the_other_side_names(tmp_path: Path) -> None:
    shutil.copytree(OLD, tmp_path / "checkout" / "results" / "world")
    shutil.copytree(NEW, tmp_path / "checkout" / "results" / "released")  # another source: not compared
    fixture = changes(diff_results(str(OLD), str(NEW)))
    new_world = tmp_path / "fresh" / "world"
    shutil.copytree(NEW, new_world)
    assert changes(diff_results(str(tmp_path / "checkout"), str(new_world))) == fixture
    # two roots: every source, named
    shutil.copytree(NEW, tmp_path / "other" / "results" / "world")
    both = changes(diff_results(str(tmp_path / "checkout"), str(tmp_path / "other")))
    assert {(f.removeprefix("world/"), r, c, s) for f, r, c, s in both if f.startswith("world/")} == fixture
    assert ("released/tables/bison/bison.csv", "", "", "removed") in both


def _git(cwd: Path, *args: str) -> str:
    res = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    assert res.returncode == 0, res.stderr
    return res.stdout


def _repo_with_two_runs(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "a@lab.invalid")
    _git(repo, "config", "user.name", "lab a")
    (repo / "params.yaml").write_text("source: world\n")
    shutil.copytree(OLD, repo / "results" / "world")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "first run")
    shutil.rmtree(repo / "results" / "world")
    shutil.copytree(NEW, repo / "results" / "world")
    _git(repo, "rm", "-rq", "--cached", "results")  # copytree keeps sizes and times: git would trust its index
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "second run")
    return repo


def test_a_git_revision_as_one_side(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo_with_two_runs(tmp_path)
    fixture = rdiff.csv_text(diff_results(str(OLD), str(NEW)))
    monkeypatch.chdir(repo)
    # the documented form: a revision against the results tree of the checkout
    assert rdiff.csv_text(diff_results("HEAD~1", "results/world")) == fixture
    # two revisions: every source, named; --repo from elsewhere
    monkeypatch.chdir(tmp_path)
    d = diff_results("HEAD~1", "HEAD", repo=repo)
    assert {(f.removeprefix("world/"), r, c, s) for f, r, c, s in changes(d)} == changes(
        diff_results(str(OLD), str(NEW))
    )
    assert run("diff-results", "HEAD", "HEAD", "--repo", str(repo)) == 0
    assert run("diff-results", "HEAD~1", "HEAD", "--repo", str(repo)) == 4


@pytest.mark.slow
def test_a_revision_whose_results_dvc_tracks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Shared results (`itmbench share`) are DVC-tracked: a revision's files come from the DVC cache."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "a@lab.invalid")
    _git(repo, "config", "user.name", "lab a")
    monkeypatch.chdir(repo)
    subprocess.run(["dvc", "init", "-q"], check=True)
    for side, message in ((OLD, "first run"), (NEW, "second run")):
        shutil.rmtree(repo / "results" / "world", ignore_errors=True)
        shutil.copytree(side, repo / "results" / "world", copy_function=shutil.copy)  # fresh times for DVC
        subprocess.run(["dvc", "add", "-q", "results/world"], check=True)
        _git(repo, "add", "-A")
        _git(repo, "commit", "-qm", message)
    assert "results/world/tables/bison/bison.csv" not in _git(repo, "ls-files")
    fixture = changes(diff_results(str(OLD), str(NEW)))
    assert changes(diff_results("HEAD~1", "results/world")) == fixture
    assert {(f.removeprefix("world/"), r, c, s) for f, r, c, s in changes(diff_results("HEAD~1", "HEAD"))} == fixture


# --- bad input: exit 2, naming the file and the line ---------------------------------------------


def _bad(tmp_path: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert run("diff-results", *argv) == 2
    return capsys.readouterr().err


def test_a_side_that_is_neither_a_tree_nor_a_revision(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(_repo_with_two_runs(tmp_path))
    err = _bad(tmp_path, capsys, "no-such-run", "results/world")
    assert "no-such-run: neither a results tree" in err
    assert "a file" in _bad(tmp_path, capsys, "params.yaml", "results/world")
    (tmp_path / "empty").mkdir()
    assert "a folder without results" in _bad(tmp_path, capsys, str(tmp_path / "empty"), "results/world")
    err = _bad(tmp_path, capsys, "HEAD~1", str(tmp_path / "fresh" / "nothing"))
    assert "nothing: neither a results tree" in err


def _broken(tmp_path: Path, rel: str, text: str) -> Path:
    shutil.copytree(OLD, tmp_path / "broken", dirs_exist_ok=True)
    (tmp_path / "broken" / rel).write_text(text)
    return tmp_path / "broken"


@pytest.mark.parametrize(
    ("rel", "text", "message"),
    [
        (
            "tables/bison/bison.csv",
            "row,column,value,lo,hi\nclip,bison,75.0,71.2\n",
            "bison.csv:2: 4 fields; expected 5",
        ),
        (
            "tables/bison/bison.csv",
            "row,column,value,lo,hi\nclip,bison,75.0,71.2,78.5\nvse,bison,high,64.3,72.3\n",
            "bison.csv:3: column 'value' is 'high'",
        ),
        (
            "tables/bison/bison.csv",
            "row,column,value,lo,hi\nclip,bison,75.0,71.2,78.5\nclip,bison,76.0,71.2,78.5\n",
            "bison.csv:3: cell ('clip', 'bison') repeats line 2",
        ),
        ("tables/bison/bison.csv", "", "bison.csv:1: no header line"),
        ("metrics/bison/clip.json", '{"metrics": {\n  "bison": {"value": 1,}}}\n', "clip.json: line 2 column"),
        ("metrics/bison/clip.json", '[{"value": 75.0}]\n', "clip.json: top level is a JSON list; expected an object"),
        (
            "metrics/bison/clip.json",
            '{"bison": {"value": 75.0},\n "bison": {"value": 1.0}}\n',
            "clip.json: line 2 column 2: key 'bison' appears twice in one object (first at line 1",
        ),
    ],
)
def test_a_malformed_file_is_named_with_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], rel: str, text: str, message: str
) -> None:
    broken = _broken(tmp_path, rel, text)
    err = _bad(tmp_path, capsys, str(OLD), str(broken))
    assert f"{broken / rel}:" in err and message in err, err


def test_a_link_out_of_a_results_tree_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outside = tmp_path / "secret.csv"
    outside.write_text("row,column,value\nkey,token,1\n")
    broken = _broken(tmp_path, "tables/bison/bison.csv", "")
    (broken / "tables/bison/bison.csv").unlink()
    (broken / "tables/bison/bison.csv").symlink_to(outside)
    err = _bad(tmp_path, capsys, str(OLD), str(broken))
    assert f"{broken / 'tables/bison/bison.csv'}: a link to {outside}, outside the results tree" in err, err
    assert "token" not in err


def test_a_malformed_file_at_a_revision_is_named_by_revision_and_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _repo_with_two_runs(tmp_path)
    (repo / "results/world/tables/bison/bison.csv").write_text("row,column,value,lo,hi\nclip,bison\n")
    _git(repo, "commit", "-qam", "broken")
    monkeypatch.chdir(repo)
    err = _bad(tmp_path, capsys, "HEAD~1", "HEAD")
    assert "HEAD:results/world/tables/bison/bison.csv:2: 2 fields; expected 5" in err, err


def test_the_random_tables_exercise_every_status() -> None:
    seen = set()
    for seed in range(25):
        rng = random.Random(seed)
        old = _random_table(rng)
        seen |= {s for _, _, s in naive_statuses(old, _perturbed(old, rng))}
    assert seen == set(rdiff.STATUSES)


def test_the_docs_quote_the_definition_and_the_example() -> None:
    page = (REPO / "docs" / "outputs.md").read_text()
    assert rdiff.DEFINITION in page
    assert "<!-- snippet: file tests/data/results_diff/report.md -->" in page
    assert "itmbench " + " ".join(EXAMPLE_ARGS) in page


def test_a_papers_comparison_table_is_keyed_by_table_block_row_and_column(tmp_path: Path) -> None:
    """A paper's table as write_comparison writes it: the derived columns are fields, NaN cells stay equal."""
    from itmbench.papers.tables import compare, write_comparison

    published = pd.DataFrame(
        {
            "table": ["Table 1"] * 2,
            "block": ["I2T", "I2T"],
            "row": ["A", "B"],
            "column": ["acc", "acc"],
            "value": [75.8, 40.0],
            "decimals": [1, 1],
            "note": ["", ""],
        }
    )
    for side, value in (("a", 12.26), ("b", 13.04)):
        regenerated = pd.DataFrame(
            {"table": ["Table 1"], "block": ["I2T"], "row": ["A"], "column": ["acc"], "value": [value]}
            | {"lo": [10.0], "hi": [14.0], "model": ["w1"]}
        )
        compared = compare(regenerated, "any", published=published, expect_equal=False, keep_unregenerated=True)
        write_comparison(compared, tmp_path / side / "tables" / "p" / "table1", "Table 1 in the world")
    d = diff_results(str(tmp_path / "a"), str(tmp_path / "b"))
    assert [(c.row, c.column, c.status) for c in d.changes] == [("Table 1 / I2T / A", "acc", "changed")]
    fields = rdiff.csv_text(d).splitlines()[1]
    assert "regenerated: 12.3 → 13.0" in fields and "difference: -63.5 → -62.8" in fields
