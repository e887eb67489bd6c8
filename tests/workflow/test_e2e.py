"""End to end: the DAG on a tiny world, from nothing to reports/index.html, then nothing to do.

The run is the session's `tiny_world_run` (tests/conftest.py), built once and shared with every test that reads
it; the test that changes it (share, a changed parameter, rerun) works on `tiny_world_run_copy`."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from workflow_helpers import REPO, TINY, copy_workflow, docs_shape_problems, failure, planned_jobs, snakemake

from itmbench.papers.claims import CLAIM_ORDER
from itmbench.papers.coverage import is_released_path, load_coverage
from itmbench.papers.registry import PAPERS, named_target_items
from itmbench.report.index import DIFFERENCES_NOTE


@pytest.mark.slow
def test_dag_builds_the_reports(tiny_world_run):
    index = (tiny_world_run / "reports/index.html").read_text()
    assert 'href="world/retrieval.html"' in index
    html = (tiny_world_run / "reports/world/retrieval.html").read_text()
    assert "clip [original]" in html and "random [truth]" in html
    for ext in ("csv", "md", "tex"):
        assert (tiny_world_run / f"results/world/tables/retrieval/retrieval.{ext}").stat().st_size > 0


WORLD_PAPER_FILES = {
    "bison": (["table1", "table3"], ["accuracy"]),
    "mcic": (["table3"], ["accuracy"]),
    "eccv": (["table4", "table5"], ["ranking"]),
    "bivlc": (["table2", "table3", "table4"], ["scores"]),
    "cxc": (["table2", "table3", "table4", "table5"], ["recall"]),
    "sugarcrepe": (["table3"], ["subtypes"]),
    "aro": (["results", "relations"], ["sets"]),
}


@pytest.mark.slow
def test_dag_builds_each_papers_world_tables_figures_and_report(tiny_world_run):
    for paper, (tables, figures) in WORLD_PAPER_FILES.items():
        for stem in tables:
            for ext in ("csv", "md", "tex"):
                assert (tiny_world_run / f"results/world/tables/{paper}/{stem}.{ext}").stat().st_size > 0, (paper, stem)
        for stem in figures:
            assert (tiny_world_run / f"results/world/figures/{paper}/{stem}.png").read_bytes()[:4] == b"\x89PNG"
            assert (tiny_world_run / f"results/world/figures/{paper}/{stem}.pdf").read_bytes()[:5] == b"%PDF-"
        html = (tiny_world_run / f"reports/world/{paper}.html").read_text()
        assert "filled from the world, beside the published numbers" in html, paper
        assert html.count("data:image/png;base64") >= len(figures), paper
        if paper in CLAIM_ORDER:  # a paper without registered claims would show no claims table
            assert "claims checked on the world results" in html, paper
        else:
            assert "claims checked on the world results" not in html, paper
    table2 = pd.read_csv(tiny_world_run / "results/world/tables/bivlc/table2.csv")
    mapped = table2[(table2["row"] == "CLIP_COCO") & (table2["column"] == "I2T")].iloc[0]
    assert mapped["model"] == "clip_coco" and mapped["status"] == "compared" and mapped["published"] == 82.75
    pretrained = table2[(table2["row"] == "CLIP") & (table2["column"] == "I2T")].iloc[0]
    assert pretrained["model"] == "clip" and pretrained["published"] == 75.83  # the model the fine-tunes start from
    assert (table2["status"] == "not_regenerated").any()  # printed models the world has no counterpart for


@pytest.mark.slow
def test_every_regenerated_item_of_the_coverage_exists_after_the_run(tiny_world_run):
    """A world item's files are built; a released item's only when the run had a mirror (this one has none)."""
    had_mirror = bool(TINY.get("mirror"))
    checked = 0
    for paper in PAPERS:
        for item in load_coverage(paper):
            if (paper, item.item) in named_target_items():  # a named target's: built where its test runs it
                continue
            for path in item.paths("world") if item.regenerated else ():
                built = (tiny_world_run / path).is_file() and (tiny_world_run / path).stat().st_size > 0
                expected = had_mirror if is_released_path(path) else True
                assert built == expected, (paper, item.item, path)
                checked += 1
    assert checked > 0


def _index_section(html: str, paper: str) -> str:
    return html.split(f'<section id="{paper}">', 1)[1].split("</section>", 1)[0]


@pytest.mark.slow
def test_the_index_shows_each_paper_its_claims_and_coverage_with_links_that_resolve(tiny_world_run):
    html = (tiny_world_run / "reports/index.html").read_text()
    for paper in PAPERS:
        assert f'<section id="{paper}">' in html, paper
    hrefs = re.findall(r'href="([^"]*)"', html)
    for href in hrefs:
        if href.startswith("#"):
            assert f'id="{href[1:]}"' in html, href
        else:
            assert (tiny_world_run / "reports" / href).resolve().is_file(), href
    for paper in PAPERS:  # every file of a world item is linked, but a named target's (the run does not build it)
        for item in load_coverage(paper):
            linked = (paper, item.item) not in named_target_items()
            for path in item.paths("world", released=False) if item.regenerated else ():
                assert (f"../{path}" in hrefs) == linked, (paper, item.item, path)
    claims = pd.read_csv(tiny_world_run / "results/world/tables/claims/claims.csv")
    for paper, part in claims.groupby("paper"):
        holds = part["holds"].map({True: "holds", False: "does not hold", "True": "holds", "False": "does not hold"})
        n = holds.fillna("undecided").value_counts()
        text = ", ".join(f"{v} {n.get(v, 0)}" for v in ("holds", "does not hold", "undecided"))
        assert f"checked on the world results: {text}." in _index_section(html, paper), paper
    assert html.count(DIFFERENCES_NOTE) == len(PAPERS)
    assert "<th>difference</th>" in html  # the world tables have cells beside published numbers


@pytest.mark.slow
def test_the_claims_table_has_every_registered_claim_decided_or_with_its_reason(tiny_world_run):
    from itmbench.papers.claims import registered_claims

    claims = pd.read_csv(tiny_world_run / "results/world/tables/claims/claims.csv", keep_default_na=False)
    assert sorted(zip(claims["paper"], claims["claim"])) == sorted((c.paper, c.id) for c in registered_claims())
    undecided = claims[claims["holds"].astype(str) == ""]
    assert (undecided["reason"].str.len() > 0).all(), undecided[["paper", "claim"]]
    # the accuracy benchmarks' paired tables are read: BISON's system comparison pairs BISON's items
    assert (tiny_world_run / "results/world/tables/bison/paired.csv").is_file()
    assert (tiny_world_run / "results/world/tables/sugarcrepe/paired.csv").is_file()


BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def _dump_dom(browser: str, page, profile) -> str:
    """The page's DOM after Chromium loaded and rendered it (headless; --no-sandbox: CI runs as root)."""
    cmd = [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        f"--user-data-dir={profile}",
        "--virtual-time-budget=5000",
        "--dump-dom",
        page.resolve().as_uri(),
    ]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and "</html>" in res.stdout, (page, res.returncode, res.stderr[-2000:])
    return res.stdout


@pytest.mark.slow
def test_every_report_renders_in_a_browser_as_results_with_links_that_resolve(tiny_world_run, tmp_path):
    """Each report, opened in a headless Chromium: its title and navigation, no code cell, every link a file."""
    browser = next((shutil.which(b) for b in BROWSERS if shutil.which(b)), None)
    if browser is None:
        pytest.skip(f"no headless browser ({', '.join(BROWSERS)}); on Debian: apt-get install chromium")
    reports = sorted((tiny_world_run / "reports").rglob("*.html"))
    index = tiny_world_run / "reports/index.html"
    assert index in reports and len(reports) == 1 + len(list((tiny_world_run / "reports/world").glob("*.html"))) >= 8
    for page in reports:
        dom = _dump_dom(browser, page, tmp_path / "profile")
        classes = set(" ".join(re.findall(r'class="([^"]*)"', dom)).split())
        assert not classes & {"jp-InputArea", "input_area", "jp-InputPrompt", "prompt"}, page  # no code cell
        assert "In&nbsp;[" not in dom and "In [" not in dom, page
        assert "<h1" in dom, page
        links = re.findall(r'\b(?:href|src)="([^"]*)"', dom)
        for link in links:
            if link.startswith("data:"):
                continue
            assert not link.startswith(("http:", "https:", "//")), (page, link)  # nothing from outside
            if link.startswith("#"):
                assert f'id="{link[1:]}"' in dom, (page, link)
                continue
            assert (page.parent / link.split("#")[0]).resolve().is_file(), (page, link)
        if page == index:
            continue
        assert 'class="itm-nav"' in dom and 'aria-current="page"' in dom, page
        linked = {(page.parent / link).resolve() for link in links if link.endswith(".html")}
        assert linked == set(reports) - {page}, page  # the index and every other report
        assert "jp-OutputArea" in classes, page
    bivlc = _dump_dom(browser, tiny_world_run / "reports/world/bivlc.html", tmp_path / "profile")
    assert "T2I is below I2T (test: " in bivlc and '{"' not in bivlc.split("<main>", 1)[1]  # claims as sentences


@pytest.mark.slow
def test_snakemake_report_includes_the_paper_tables_and_figures(tiny_world_run, tmp_path):
    import zipfile

    res = snakemake(tiny_world_run, "--report", str(tmp_path / "report.zip"))  # outside the shared run
    assert res.returncode == 0, res.stderr[-3000:]
    with zipfile.ZipFile(tmp_path / "report.zip") as archive:
        names = archive.namelist()
    assert any(n.endswith("report.html") for n in names)
    data_figures = sum(len(PAPERS[paper].data_figures) for paper in WORLD_PAPER_FILES)  # CxC's Figures 3-5
    assert sum(n.endswith(".png") for n in names) == len(WORLD_PAPER_FILES) + data_figures
    assert sum(n.endswith("table5.csv") for n in names) == 3  # ECCV's, CxC's and MCIC's (lambda_gen)


@pytest.mark.slow
def test_trained_model_beats_random_by_a_clear_margin(tiny_world_run):
    table = pd.read_csv(tiny_world_run / "results/world/tables/retrieval/retrieval.csv")
    orig = table[(table["positive_set"] == "original") & table["column"].str.contains("R@5")]
    by_model = orig.groupby("model")["value"].mean()
    # random's R@5 on 100 images / 500 captions is about 1-5%; the trained model is far above
    assert by_model["random"] < 8.0
    assert by_model["clip"] > by_model["random"] + 15.0
    # and its interval excludes the random model's value
    clip_lo = orig[orig["model"] == "clip"]["lo"].min()
    assert clip_lo > orig[orig["model"] == "random"]["value"].max()


@pytest.mark.slow
def test_same_params_give_byte_identical_tables(tiny_world_run, tmp_path):
    """Built again, each job in its own fresh process (no worker): the shared run's jobs ran in the worker."""
    again = copy_workflow(tmp_path)
    res = snakemake(again, "results/world/tables/retrieval/retrieval.csv", env={"ITMBENCH_WORKER": "0"})
    assert res.returncode == 0, failure(again, res)
    assert not (again / "logs/worker.jsonl").exists()
    for ext in ("csv", "md", "tex"):
        rel = f"results/world/tables/retrieval/retrieval.{ext}"
        assert (again / rel).read_bytes() == (tiny_world_run / rel).read_bytes(), rel
    for rel in ("results/world/models/clip/model.pt", "results/world/embeddings/clip/items.npz"):
        assert (again / rel).read_bytes() == (tiny_world_run / rel).read_bytes(), rel


@pytest.mark.slow
def test_the_run_ran_its_jobs_in_one_worker_and_stopped_it(tiny_world_run):
    commands = [json.loads(line) for line in (tiny_world_run / "logs/worker.jsonl").read_text().splitlines()]
    jobs = [p for p in (tiny_world_run / "benchmarks/rules").rglob("*.tsv")]
    assert len(commands) == len(jobs) and all(c.get("status") == 0 for c in commands), [
        c for c in commands if c.get("status") != 0
    ]
    assert {c["argv"][0] for c in commands} >= {"world", "train", "embed", "score-benchmark", "score-pairs"}
    # stopped when Snakemake exited: the process is gone, and the folder of its socket
    started = re.search(r"itmbench worker (\d+): serving (\S+)", (tiny_world_run / "logs/worker.log").read_text())
    pid, socket_path = int(started.group(1)), Path(started.group(2))
    assert not Path(f"/proc/{pid}").exists() and not socket_path.parent.exists()


# Outputs the docs show that named targets write, not the default run: checked where a test runs that target.
ELSEWHERE = {
    "results/world/tables/bivlc/generators.md": "tests/workflow/test_generators_dag.py",
    "results/world/tables/bison/table6.md": "tests/workflow/test_bison_table6_dag.py",
}


@pytest.mark.slow
def test_every_world_output_the_docs_show_has_the_shape_the_run_writes(tiny_world_run):
    """docs/README.md, "Numbers in the docs": a snippet of a world output, skipped by tests/test_docs.py where no
    default run exists, is checked against this run: its file written, its JSON key resolving, no column of the
    run's table absent from the page (issue 35)."""
    checked, problems = docs_shape_problems(
        tiny_world_run, lambda p: p.startswith("results/world/") and p not in ELSEWHERE
    )
    assert len(checked) >= 40, checked
    assert not problems, "\n".join(problems)


@pytest.mark.slow
def test_nothing_to_do_after_a_full_run(tiny_world_run):
    res = snakemake(tiny_world_run, "-n")
    assert res.returncode == 0, res.stderr[-2000:]
    assert "Nothing to be done" in res.stdout + res.stderr


@pytest.mark.slow
def test_lint_is_clean(tiny_world_run):
    res = snakemake(tiny_world_run, "--lint")
    assert res.returncode == 0 and "Congratulations" in res.stdout + res.stderr, res.stdout[-3000:]


def test_typo_in_params_fails_at_load(tmp_path):
    d = copy_workflow(tmp_path)
    params = yaml.safe_load((d / "params.yaml").read_text())
    params["world"]["n_tset"] = 5
    (d / "params.yaml").write_text(yaml.safe_dump(params))
    res = snakemake(d, "-n")
    assert res.returncode != 0
    assert "n_tset" in res.stdout + res.stderr


SCORING_RULES = {
    "score_benchmark",  # per-instance scores and their metrics, one job per (model, benchmark)
    "table_benchmark",
    "report_benchmark",
    "claims",
    "claims_paper",
    "index",
    "all",
}
WORLD_PAPERS = ("bison", "bivlc", "cxc", "eccv", "mcic", "sugarcrepe", "aro")


@pytest.mark.slow
def test_a_bivlc_parameter_reruns_only_what_bivlc_feeds(tiny_world_run):
    jobs = planned_jobs(tiny_world_run, override={"bivlc": {"p_extra_object": 0.25}})
    rules = {rule for rule, _ in jobs}
    cross = {"score_pairs", "score_benchmark_pairs"}  # the cross scorers rescore BiVLC's pairs
    assert rules == SCORING_RULES | cross | {
        "build_benchmark",
        "audit_benchmark",
        "embed_added",
        "world_tables_bivlc",
        "world_figures_bivlc",
        "bivlc_paired",  # the paired tests read BiVLC's per-instance scores
        "bivlc_figure4_data",  # and Figure 4's margins, then its drawing
        "bivlc_figure4",
    }, rules
    for rule, wildcards in jobs:
        assert "cxc" not in wildcards, (rule, wildcards)
        if "bench=" in wildcards or "added=" in wildcards:
            assert "bivlc" in wildcards, (rule, wildcards)
    assert "train" not in rules and "embed" not in rules and "train_ffnn" not in rules


@pytest.mark.slow
def test_an_mcic_parameter_reruns_only_what_mcic_feeds(tiny_world_run):
    """The lambda grid changes MCIC's decoys: its build, its train split and the option scorers trained on it
    (which score the other benchmarks' pairs too), never another benchmark's build or an embedding model."""
    jobs = planned_jobs(tiny_world_run, override={"mcic": {"lambda_grid": [0.2, 0.3, 0.4]}})
    rules = {rule for rule, _ in jobs}
    assert {"build_benchmark", "mcic_train_split", "mcic_lambda_search", "train_ffnn", "world_tables_mcic"} <= rules
    assert "train" not in rules and "embed" not in rules and "embed_train_split" not in rules, rules
    assert "mcic_optimize_pv" not in rules  # OPTIMIZE-PV reads only the PV keys: its choice still holds
    option_scorers = {"ffnn", "mcic_i2c", "mcic_c2i", "mcic_linm", "vec2seq"}
    for rule, wildcards in jobs:
        if rule in ("build_benchmark", "audit_benchmark", "score_benchmark"):  # dual encoders rescore MCIC only
            assert "bench=mcic" in wildcards, (rule, wildcards)
        if rule in ("score_pairs", "score_benchmark_pairs") and "bench=mcic" not in wildcards:
            assert wildcards.split("cross=")[-1].strip() in option_scorers, (rule, wildcards)
    assert {w.split("ffnn=")[-1] for r, w in jobs if r == "train_ffnn"} == option_scorers


@pytest.mark.slow
def test_a_score_parameter_reruns_only_scoring_tables_and_reports(tiny_world_run):
    """The metrics' intervals are a second output of the scoring jobs: no model job, no embedding reruns."""
    jobs = planned_jobs(tiny_world_run, override={"score": {"n_boot": 50}})
    rules = {rule for rule, _ in jobs}
    assert rules == {
        "score_benchmark",
        "score_benchmark_pairs",
        "bison_caption_metric",  # BISON section 6's accuracies carry the same intervals
        "bison_table4",  # and Table 4's captioning metrics their bootstrap intervals
        "bison_figure8_data",  # and Figure 8's means and medians theirs, then its drawing
        "bison_figure4_data",  # Figure 4's bins their intervals (and it reads Figure 8's caption scores)
        "bison_figure",
        "table_benchmark",
        "report_benchmark",
        "claims",
        "claims_paper",
        "index",
        "all",
        "cxc_encoder_sts",  # CxC Figure 5 and Table 1 read the scores (Figure 5's fit its n_boot), then its drawing
        "cxc_table1",
        "cxc_figure",
        "bivlc_paired",  # BiVLC's paired bootstrap draws score.n_boot resamples
        "bison_paired",  # and BISON's, MCIC's and SugarCrepe's theirs
        "mcic_paired",
        "sugarcrepe_paired",
        "gallery_paired",  # so do ECCV's and CxC's paired bootstraps over queries
        "eccv_rank_tau",  # and the intervals of ECCV's ranking correlations
        "bivlc_figure4_data",  # and Figure 4's means and medians theirs, then its drawing
        "bivlc_figure4",
        "eccv_appendix_e",  # ECCV Table E.1 and Figure E.2 read the scores (and the score section's bootstrap),
        "eccv_annotator_ranks",  # Figure E.3 the metrics, then their drawings
        "eccv_annotator_similarity",  # Tables A.1 and B.2 draw the score section's bootstrap resamples
        "eccv_answer_shares",
        "eccv_table2",  # Table 2's bootstrap over queries too
        "eccv_figure",
    } | {f"world_{kind}_{paper}" for kind in ("tables", "figures") for paper in WORLD_PAPERS}, rules
    assert [w for r, w in jobs if r == "cxc_figure"] == ["cxc_figure=figure5"]  # Figures 3 and 4 read no score
    bison_figures = sorted(w for r, w in jobs if r == "bison_figure")
    assert bison_figures == ["bison_data_figure=figure4", "bison_data_figure=figure8"]  # nor do 6, 9 and 14


@pytest.mark.slow
def test_a_world_parameter_reruns_everything_downstream(tiny_world_run):
    everything = {rule for rule, _ in planned_jobs(tiny_world_run, "--forceall")}
    jobs = planned_jobs(tiny_world_run, override={"world": {"noise": 5.0}})
    assert {rule for rule, _ in jobs} == everything
    assert len(jobs) == len(planned_jobs(tiny_world_run, "--forceall"))


def _git(cwd, *args):
    res = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    return res.stdout


def _run(cwd, *cmd):
    res = subprocess.run(list(cmd), cwd=cwd, capture_output=True, text=True)
    assert res.returncode == 0, (cmd, res.stdout[-2000:], res.stderr[-3000:])
    return res.stdout


@pytest.mark.slow
def test_share_then_pull_in_a_fresh_clone_has_nothing_to_run_and_dvc_diffs_work(
    tiny_world_run, tiny_world_run_copy, tmp_path
):
    lab_a, lab_b, store = tiny_world_run_copy, tmp_path / "lab_b", tmp_path / "dvc_store"  # copy2: the run's times
    for name in (".gitignore", "dvc.yaml", "data/.gitignore", "results/.gitignore"):
        shutil.copy(REPO / name, lab_a / name)
    _git(lab_a, "init", "-q")
    _git(lab_a, "config", "user.email", "a@lab.invalid")
    _git(lab_a, "config", "user.name", "lab a")
    _run(lab_a, "dvc", "init", "-q")
    _run(lab_a, "dvc", "remote", "add", "-d", "store", str(store))
    _run(lab_a, sys.executable, "-m", "itmbench.cli", "share")
    _git(lab_a, "add", "-A")
    _git(lab_a, "commit", "-qm", "results")
    assert "data/world.dvc" in _git(lab_a, "ls-files") and "results/world.dvc" in _git(lab_a, "ls-files")

    # lab B: a fresh clone, a plain `dvc pull` (the user's literal commands), and Snakemake has nothing to do
    _git(tmp_path, "clone", "-q", str(lab_a), str(lab_b))
    _run(lab_b, "dvc", "pull")
    table = "results/world/tables/retrieval/retrieval.csv"
    assert (lab_b / table).read_bytes() == (tiny_world_run / table).read_bytes()
    res = snakemake(lab_b, "-n")
    assert res.returncode == 0, res.stderr[-3000:]
    assert "Nothing to be done" in res.stdout + res.stderr, (res.stdout + res.stderr)[-3000:]
    # a file changed after the pull still reruns its dependants
    metrics = lab_b / "results/world/metrics/retrieval/clip.json"  # read by the retrieval table (any scores file
    metrics.write_bytes(metrics.read_bytes())  # may be one no job reads: rglob's order is the file system's)
    res = snakemake(lab_b, "-n")
    assert res.returncode == 0 and "Nothing to be done" not in res.stdout + res.stderr, res.stdout[-3000:]

    # lab A changes a parameter: dvc params diff and dvc metrics diff show what it did
    params = yaml.safe_load((lab_a / "tiny.yaml").read_text())
    params["score"]["confidence"] = 0.9
    (lab_a / "tiny.yaml").write_text(yaml.safe_dump(params))
    full = yaml.safe_load((lab_a / "params.yaml").read_text())
    full["score"]["confidence"] = 0.9
    (lab_a / "params.yaml").write_text(yaml.safe_dump(full, sort_keys=False))
    # what the checks below read, rebuilt (the whole run would rescore every benchmark: minutes, nothing more shown)
    titles = ("results/world/tables/retrieval/retrieval.md", "results/world/tables/bison/bison.md")
    res = snakemake(lab_a, *titles)
    assert res.returncode == 0, failure(lab_a, res)
    # the tables' titles name the level the intervals were computed at
    for title in titles:
        text = (lab_a / title).read_text()
        assert "90% intervals" in text and "95% intervals" not in text, (title, text[:300])
    _run(lab_a, sys.executable, "-m", "itmbench.cli", "share")
    _git(lab_a, "add", "-A")
    _git(lab_a, "commit", "-qm", "90% intervals")
    pdiff = json.loads(_run(lab_a, "dvc", "params", "diff", "HEAD~1", "--json"))
    change = pdiff["params.yaml"]["score.confidence"]
    assert (change["old"], change["new"]) == (0.95, 0.9)
    mdiff = json.loads(_run(lab_a, "dvc", "metrics", "diff", "HEAD~1", "--json"))
    changed = mdiff["results/world/metrics/retrieval/clip.json"]
    assert any(k.endswith("R@10.hi") for k in changed), changed  # narrower Wilson intervals
    assert not any(k.endswith(".value") for k in changed)  # the ranks themselves did not change


@pytest.mark.slow
def test_models_that_are_not_dual_encoders_are_scored_where_they_apply(tiny_world_run):
    metrics = tiny_world_run / "results/world/metrics"
    scored = {p.parent.name + "/" + p.stem for p in metrics.glob("*/*.json")}
    for bench in ("bison", "mcic", "bivlc"):
        assert {f"{bench}/coca", f"{bench}/ffnn"} <= scored, bench
    for bench in ("retrieval", "eccv", "cxc"):
        assert f"{bench}/ffnn" in scored and f"{bench}/coca" not in scored, bench  # coca: not asked to rank galleries
    assert {
        m for m in ("bow", "pixels") for b in ("bison", "mcic", "bivlc", "eccv", "retrieval") if f"{b}/{m}" in scored
    } == set()
    bow = json.loads((metrics / "cxc/bow.json").read_text())["metrics"]
    assert any(k.startswith("t2t/") for k in bow) and "sts/spearman" in bow
    assert not any(k.startswith(("i2t/", "t2i/", "i2i/", "sis/", "sits/")) for k in bow)
    pixels = json.loads((metrics / "cxc/pixels.json").read_text())["metrics"]
    assert any(k.startswith("i2i/") for k in pixels) and not any(k.startswith(("t2t/", "i2t/")) for k in pixels)
    # the captioner is scored by likelihood on every MCIC split
    coca = json.loads((metrics / "mcic/coca.json").read_text())["metrics"]
    assert all(cell["n"] > 0 for cell in coca.values())
    # tables show the cells that are not scored, with the reason
    cxc_md = (tiny_world_run / "results/world/tables/cxc/cxc.md").read_text()
    assert "not scored (cross scorer; every caption x image pair: cost" in cxc_md and "pairs)" in cxc_md
    bison_md = (tiny_world_run / "results/world/tables/bison/bison.md").read_text()
    assert "not applicable (bag_of_words scores text-text only)" in bison_md
    assert "not applicable (pixel_features scores image-image only)" in bison_md
    retrieval = pd.read_csv(tiny_world_run / "results/world/tables/retrieval/retrieval.csv")
    # the captioner and MCIC's linear baselines are cross scorers, not asked to rank galleries
    unscored = {"bow", "coca", "pixels", "mcic_i2c", "mcic_c2i", "mcic_linm"}
    assert set(retrieval.loc[retrieval["column"] == "status", "row"]) == unscored


def test_a_cross_scorer_plans_no_embedding_and_no_gallery_jobs_unless_asked(tiny_world_plan, tmp_path):
    jobs = [(job["rule"], job["wildcards"]) for job in tiny_world_plan]
    galleries = ("retrieval", "eccv", "cxc")
    coca = [(r, w) for r, w in jobs if "coca" in w]
    assert coca and not any(r in ("embed", "embed_added", "embed_train_split") for r, _ in coca)
    assert not any(g in w for _, w in coca for g in galleries), coca
    assert {w for r, w in coca if r == "score_pairs"} == {
        f"pairbench={b}, cross=coca" for b in ("aro", "bison", "bivlc", "mcic", "sugarcrepe")
    }
    assert not any(r == "score_gallery_pairs" for r, w in coca)
    ffnn_pairs = {w for r, w in jobs if r == "score_pairs" and "cross=ffnn" in w}
    assert len(ffnn_pairs) == 5  # and its galleries' pairs once: the tiny params list it in gallery_models
    assert [w for r, w in jobs if r == "score_gallery_pairs"] == ["cross=ffnn"]
    asked = planned_jobs(copy_workflow(tmp_path), override={"cross_scorers": {"gallery_models": ["ffnn", "coca"]}})
    assert sorted(w for r, w in asked if r == "score_gallery_pairs") == ["cross=coca", "cross=ffnn"]
    assert not any(r == "score_pairs" and g in w for r, w in asked for g in galleries)  # each gallery pair once
    assert not any(r.startswith("embed") and "coca" in w for r, w in asked)
