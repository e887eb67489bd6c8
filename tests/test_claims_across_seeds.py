"""benchmarks/claims_across_seeds.py's table of verdicts, read from finished runs' claims tables (`--run`): the
counts and agreement it prints against claims tables made up here, and its refusal of a folder with no table."""

from __future__ import annotations

import pandas as pd
import pytest
from benchmark_scripts import load_benchmark

CLAIMS = "results/world/tables/claims/claims.csv"


def a_run(root, seed: int, holds: dict) -> str:
    """A run folder whose claims table has these verdicts ((paper, claim) -> True, False or None)."""
    folder = root / f"run_{seed}"
    (folder / CLAIMS).parent.mkdir(parents=True)
    rows = [{"paper": p, "claim": c, "text": "a sentence", "holds": h} for (p, c), h in holds.items()]
    pd.DataFrame(rows).to_csv(folder / CLAIMS, index=False)
    return f"{seed}={folder}"


def test_each_claim_counts_the_draws_it_holds_on_and_whether_they_agree(tmp_path, capsys):
    script = load_benchmark("claims_across_seeds")
    runs = [
        a_run(tmp_path, 0, {("a", "steady"): True, ("a", "turns"): True, ("b", "fails"): False, ("b", "open"): None}),
        a_run(tmp_path, 1, {("a", "steady"): True, ("a", "turns"): False, ("b", "fails"): False, ("b", "open"): True}),
        a_run(tmp_path, 2, {("a", "steady"): True, ("a", "turns"): True, ("b", "fails"): False}),
    ]
    md = tmp_path / "out" / "across.md"
    assert script.main(["--run", runs[2], "--run", runs[0], "--run", runs[1], "--md", str(md)]) == 0
    text = md.read_text()
    assert text == capsys.readouterr().out.rstrip("\n") + "\n"
    rows = {line.split(" | ")[1]: line for line in text.splitlines() if line.startswith(("| a |", "| b |"))}
    assert rows["steady"] == "| a | steady | holds | holds | holds | 3 of 3 | yes |"
    assert rows["turns"] == "| a | turns | holds | **does not hold** | holds | 2 of 3 | no |"
    assert rows["fails"] == "| b | fails | **does not hold** | **does not hold** | **does not hold** | 0 of 3 | yes |"
    # undecided on one draw and missing on another: neither counts as a verdict
    assert rows["open"] == "| b | open | undecided | holds | absent | 1 of 1 | yes |"
    assert "(`world.seed` 0, 1, 2;" in text and "3 of 4 claims have the same verdict on every draw" in text
    assert list(rows) == ["steady", "turns", "fails", "open"]  # seed 0's order


def test_a_run_folder_without_a_claims_table_is_refused_by_name(tmp_path):
    script = load_benchmark("claims_across_seeds")
    with pytest.raises(SystemExit, match="--run '0=.*nothing'.*claims.csv"):
        script.main(["--run", f"0={tmp_path / 'nothing'}"])
