"""The README and docs/: every number rendered from its source (snippets) or allowlisted, never typed by hand."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from itmbench.report import snippets

REPO = Path(__file__).resolve().parents[1]
DOCS = snippets.doc_files(REPO)
SETUP_COMMANDS = (
    'python -m pip install -e ".[workflow]" && snakemake --cores all',
    'python -m pip install -e ".[test]" && python -m pytest',
)
# Files a link may name before they land: a page another branch writes, and the picture of the
# report that benchmarks/report_screenshot.py makes after a default run.
PENDING_FILES = {REPO / "docs" / "cluster.md", REPO / "docs" / "img" / "report.png"}


def _all_snippets() -> list[snippets.Snippet]:
    return [s for path in DOCS for s in snippets.find_snippets(path.read_text(), path)]


def _id(s: snippets.Snippet) -> str:
    return f"{s.path.relative_to(REPO)}:{s.line}:{s.spec.split()[0]}"


@pytest.mark.parametrize("snippet", _all_snippets(), ids=_id)
def test_snippet_matches_its_source(snippet: snippets.Snippet) -> None:
    try:
        rendered = snippets.render(snippet.spec, REPO)
    except snippets.MissingOutput as e:
        pytest.skip(str(e))
    expected = f"\n{rendered}\n" if snippet.block else rendered
    assert snippet.content == expected, (
        f"{_id(snippet)}: the page differs from its source; run python -m itmbench.report.snippets --update"
    )


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_no_number_is_typed_by_hand(path: Path) -> None:
    found = snippets.unchecked_numbers(path.read_text())
    assert not found, "\n".join(f"{path.name}:{line}: {num!r} in {ctx!r}" for line, num, ctx in found)


def test_the_docs_have_snippets_of_every_kind_of_repo_source() -> None:
    kinds = {s.spec.split()[0] for s in _all_snippets()}
    assert {"param", "params", "published", "file"} <= kinds


def test_every_paper_page_quotes_its_published_numbers_from_the_csvs() -> None:
    for paper in ("bison", "mcic", "eccv", "bivlc", "cxc", "sugarcrepe", "aro"):
        page = REPO / "docs" / f"{paper}.md"
        specs = [s.spec for s in snippets.find_snippets(page.read_text(), page)]
        assert any(s.startswith("published src/itmbench/papers/") for s in specs), page


def test_readme_is_short_and_keeps_the_two_setup_commands_verbatim() -> None:
    text = (REPO / "README.md").read_text()
    assert len(text.splitlines()) <= 250
    for command in SETUP_COMMANDS:
        assert text.count(command) == 1, command
    # exactly two set-up commands: the only `pip install` lines are these two
    installs = [line.strip() for line in text.splitlines() if "pip install" in line]
    assert installs == list(SETUP_COMMANDS)
    ci = (REPO / ".ci" / "run").read_text()
    assert SETUP_COMMANDS[1] in ci


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_point_at_files(path: Path) -> None:
    for target in re.findall(r"\]\(([^)#\s]*)(?:#[^)\s]*)?\)", path.read_text()):
        if not target or re.match(r"[a-z]+:", target):
            continue  # an anchor on the same page, or a URL
        full = (path.parent / target).resolve()
        assert full.exists() or full in PENDING_FILES, f"{path.name}: link to {target} points at nothing"


# The check can fail: a doctored number inside a snippet, and a number typed outside one.

PAGE = """Images per split:

<!-- snippet: param world.n_test -->{n_test}<!-- /snippet -->

<!-- snippet: published src/itmbench/papers/bivlc/published_results.csv table="Table 2" rows="Human" -->
{table}
<!-- /snippet -->
"""


def _page(tmp_path: Path, **over: str) -> tuple[Path, str]:
    spec = 'published src/itmbench/papers/bivlc/published_results.csv table="Table 2" rows="Human"'
    table = snippets.render(spec, REPO)
    fields = {"n_test": snippets.render("param world.n_test", REPO), "table": table, **over}
    path = tmp_path / "page.md"
    text = PAGE.format(**fields)
    path.write_text(text)
    return path, text


def test_a_current_page_passes(tmp_path: Path) -> None:
    path, text = _page(tmp_path)
    assert snippets.check_text(text, path, REPO) == ([], [])
    assert snippets.main([str(path), "--root", str(REPO)]) == 0


def test_a_doctored_number_inside_a_snippet_fails(tmp_path: Path) -> None:
    path, text = _page(tmp_path)
    doctored = text.replace("| 90.40 |", "| 91.40 |")
    assert doctored != text
    problems, _ = snippets.check_text(doctored, path, REPO)
    assert len(problems) == 1 and "differs from its source" in problems[0]
    inline = text.replace(f"-->{snippets.render('param world.n_test', REPO)}<!--", "-->499<!--")
    problems, _ = snippets.check_text(inline, path, REPO)
    assert len(problems) == 1 and "param world.n_test" in problems[0]


def test_a_number_typed_outside_a_snippet_fails(tmp_path: Path) -> None:
    path, text = _page(tmp_path)
    typed = text + "\nBiVLC's humans score 90.4 on I2T.\n"
    problems, _ = snippets.check_text(typed, path, REPO)
    assert len(problems) == 1 and "'90.4'" in problems[0]
    path.write_text(typed)
    assert snippets.main([str(path), "--root", str(REPO)]) == 1


def test_update_rewrites_snippets_in_place(tmp_path: Path) -> None:
    path, text = _page(tmp_path)
    path.write_text(text.replace("| 90.40 |", "| 91.40 |"))
    assert snippets.main([str(path), "--root", str(REPO), "--update"]) == 0
    assert path.read_text() == text


def test_numbers_in_code_snippets_and_allowlisted_names_pass() -> None:
    text = (
        "Python ≥ 3.10, Snakemake ≥ 9.17. BiVLC Tables 2–4 and Table D.2; issue 15; COCO 5k.\n"
        "R@1, i2t, ViT-B-32, val2014 and `table1.md` are names.\n"
        "```bash\nsnakemake --cores 1\n```\n"
        "1. a list item\n"
    )
    assert snippets.unchecked_numbers(text) == []
    assert [n for _, n, _ in snippets.unchecked_numbers("took 10.2 min, 1,205 s and 5k pairs (3x)")] == [
        "10.2",
        "1,205",
        "5",
        "3",
    ]


def test_a_pipeline_output_snippet_is_skipped_when_absent_and_checked_when_present(tmp_path: Path) -> None:
    text = "<!-- snippet: file results/world/tables/x.md -->\nold\n<!-- /snippet -->\n"
    problems, skipped = snippets.check_text(text, tmp_path / "p.md", REPO, outputs=tmp_path)
    assert problems == [] and len(skipped) == 1 and "pipeline output" in skipped[0]
    out = tmp_path / "results/world/tables/x.md"
    out.parent.mkdir(parents=True)
    out.write_text("| model | a |\n|---|---|\n| clip | 1 |\n| random | 2 |\n")
    problems, skipped = snippets.check_text(text, tmp_path / "p.md", REPO, outputs=tmp_path)
    assert skipped == [] and len(problems) == 1
    assert snippets.render("file results/world/tables/x.md rows=^clip$", REPO, tmp_path) == (
        "| model | a |\n|---|---|\n| clip | 1 |"
    )
    updated = snippets.update_text(text, REPO, tmp_path)
    assert snippets.check_text(updated, tmp_path / "p.md", REPO, outputs=tmp_path) == ([], [])


def test_params_table_reads_values_and_the_schemas_descriptions() -> None:
    table = snippets.render("params world keys=n_test,image_size", REPO).splitlines()
    assert table[0] == "| key | value | what it does |"
    n_test = snippets.render("param world.n_test", REPO)
    assert table[2].startswith(f"| `n_test` | `{n_test}` | Images in the test split")
    assert table[3].startswith("| `image_size` |") and "pixels" in table[3]


def test_released_table_reads_the_registry() -> None:
    from itmbench.sources.released import load_registry

    declared = load_registry(REPO / "src" / "itmbench" / "sources" / "released.yaml")
    table = snippets.render("released keys=mcic_dev|coco_val2014_images", REPO).splitlines()
    assert table[0] == "| key | URL | size | md5 | records |" and len(table) == 4
    mcic = next(line for line in table if "`mcic_dev`" in line)
    assert declared["mcic_dev"].url in mcic and f"`{declared['mcic_dev'].md5}`" in mcic
    assert f"{declared['mcic_dev'].records:,}" in mcic
    coco = next(line for line in table if "`coco_val2014_images`" in line)
    assert coco.endswith("| – | – | – |")  # size, md5 and count unknown to the registry: a dash, never a guess
    rows = snippets.render("released benchmark=cxc", REPO).splitlines()[2:]
    assert len(rows) == sum(f.benchmark == "cxc" for f in declared.values())
    with pytest.raises(KeyError, match="nosuch"):
        snippets.render("released keys=nosuch", REPO)


def test_the_shape_check_passes_other_numbers_and_fails_on_new_names(tmp_path: Path) -> None:
    """snippets.shape_problems, as tests/workflow/test_e2e.py applies it to the tiny run: numbers may differ, a
    file, a key or a column the run writes and the page does not know may not."""
    run = tmp_path / "run"
    (run / "results/world/tables").mkdir(parents=True)
    (run / "results/world/tables/t.md").write_text("**T (95%)**\n\n| model | R@1 |\n|---|---|\n| clip | 3.1 |\n")
    (run / "results/world/m.json").write_text('{"metrics": {"r1": 12.5, "name": "clip"}}')
    table = "\n**T (90%)**\n\n| model | R@1 |\n|---|---|\n| clip | 9.9 |\n| vse | 1.0 |\n"

    def problems(spec: str, content: str) -> list[str]:
        page = f"<!-- snippet: {spec} -->{content}<!-- /snippet -->"
        (snippet,) = snippets.find_snippets(page, tmp_path / "page.md")
        return snippets.shape_problems(snippet, REPO, run)

    assert problems("file results/world/tables/t.md", table) == []
    assert problems("json results/world/m.json metrics.r1", "40.0") == []
    (run / "results/world/tables/t.md").write_text("| model | R@1 | R@5 |\n|---|---|---|\n| clip | 3.1 | 9 |\n")
    assert "columns ['R@5'] are written by the run" in problems("file results/world/tables/t.md", table)[0]
    assert "is not written by the run" in problems("file results/world/tables/gone.md", table)[0]
    assert "no key 'metrics.r10'" in problems("json results/world/m.json metrics.r10", "40.0")[0]
    assert "the run writes 'clip'" in problems("json results/world/m.json metrics.name", "40.0")[0]
    with pytest.raises(snippets.MissingOutput):
        problems("param world.n_test", "5")
