"""A model's `benchmarks` (params.yaml models.<name>.benchmarks): the plan scores it there only."""

from __future__ import annotations

from pathlib import Path

import pytest

from itmbench.papers import plan

REPO = Path(__file__).resolve().parents[2]
SPECS = {
    "clip": {"family": "open_clip", "arch": "itm-clip-tiny"},
    "ablation": {"family": "open_clip", "arch": "itm-clip-tiny", "benchmarks": ["cxc"]},
    "bow": {"family": "bag_of_words"},
}


def test_a_listed_model_is_scored_on_its_benchmarks_only() -> None:
    for bench in plan.benchmarks():
        scored = plan.scored_models(bench, SPECS, [])
        assert ("ablation" in scored) == (bench == "cxc"), bench
        assert "clip" in scored  # no list: every benchmark it can score
    assert plan.scored_models("cxc", SPECS, []) == ["ablation", "bow", "clip"]


def test_a_list_naming_a_benchmark_the_model_cannot_score_or_an_unknown_one_is_refused() -> None:
    plan.check_listed(SPECS, [])
    with pytest.raises(
        ValueError, match=r"models\.bow\.benchmarks: 'bison' is not applicable for family 'bag_of_words'"
    ):
        plan.check_listed({**SPECS, "bow": {"family": "bag_of_words", "benchmarks": ["bison"]}}, [])
    coca = {"family": "coca", "benchmarks": ["retrieval"]}
    with pytest.raises(ValueError, match=r"models\.coca\.benchmarks: 'retrieval' is not scored"):
        plan.check_listed({"coca": coca}, [])  # a gallery benchmark a cross scorer is not asked to rank
    plan.check_listed({"coca": coca}, ["coca"])
    with pytest.raises(ValueError, match=r"models\.x\.benchmarks: unknown benchmarks \['cxcx'\]"):
        plan.listed({"benchmarks": ["cxcx"]}, "cxc", "x")


def test_the_default_runs_cxc_ablations_are_scored_where_their_benchmarks_say() -> None:
    """CxC only, but the ResNet one, BISON Table 7's second image tower, also on retrieval and BISON."""
    params = plan.load_params(REPO / "params.yaml")
    ablations = params["report"]["cxc"]["ablations"]
    files = plan.metrics_files(params)
    for name, model in ablations.items():
        mine = [f for f in files if f.endswith(f"/{model}.json")]
        benches = ["bison", "cxc", "retrieval"] if name == "ResNet-152" else ["cxc"]
        assert mine == [f"results/world/metrics/{b}/{model}.json" for b in benches] or name == "baseline", (name, mine)
    assert len([f for f in files if f.endswith("/de_i2t.json")]) == len(plan.benchmarks())  # the baseline: all
