"""BiVLC Table 6 (TROHN-Text statistics): counts and shares against a naive reference, the printed counts, the
trainer's own summary on a tiny world, and the command's refusals."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from unit_world import unit_world

from itmbench.cli import main
from itmbench.errors import EXIT_INPUT, InputError
from itmbench.metrics.intervals import wilson_interval
from itmbench.papers.bivlc.tables import (
    INSTANCES_ROW,
    SHARE_ROW,
    TABLE6_SUBSETS,
    table6_long,
    table6_published,
    trohn_text_comparison,
    trohn_text_counts,
)
from itmbench.papers.published import load_published
from itmbench.params import make_config
from itmbench.train.config import TrainConfig
from itmbench.train.loop import TrainData
from itmbench.train.recipes import RECIPES
from itmbench.world.generate import generate_world

COLUMNS = ["Replace Obj", "Replace Att", "Replace Rel", "Swap Obj", "Swap Att", "Add Obj", "Add Att"]


def _summary(counts: dict[str, int], model: str = "clip_trohn_text", key: str = "by_subset") -> dict:
    samples = {"samples": 10, "negatives": sum(counts.values()), key: counts} if key == "by_subset" else {key: counts}
    return {"model": model, "trainer": "negclip", "samples": samples}


def test_table6_cells_equal_a_naive_count_and_wilson_share() -> None:
    rng = np.random.default_rng(0)
    subsets = rng.choice(TABLE6_SUBSETS, size=137)  # a made-up TROHN-Text: one subtype per negative
    counts = Counter(subsets.tolist())
    long = table6_long({"m": {s: counts.get(s, 0) for s in TABLE6_SUBSETS}}).set_index(["row", "column"])
    for subset, column in zip(TABLE6_SUBSETS, COLUMNS):
        k = sum(1 for s in subsets if s == subset)
        assert long.loc[(INSTANCES_ROW, column), "value"] == k
        lo, hi = wilson_interval(k, 137)
        share = long.loc[(SHARE_ROW, column)]
        assert share["value"] == pytest.approx(100 * k / 137) and share["n"] == 137
        assert (share["lo"], share["hi"]) == pytest.approx((100 * lo, 100 * hi))
    assert long.loc[(INSTANCES_ROW, "TOTAL"), "value"] == 137
    assert set(long["model"]) == {"m"} and set(long["block"]) == {""}
    two = table6_long({"a": dict.fromkeys(TABLE6_SUBSETS, 1), "b": dict.fromkeys(TABLE6_SUBSETS, 2)})
    assert set(two["block"]) == {"a", "b"}  # several TROHN-Text models: a block each


def test_the_printed_counts_add_up_and_their_shares_are_derived_from_them() -> None:
    pub = load_published("bivlc")
    printed = pub[pub["table"] == "Table 6"].set_index("column")["value"]
    assert list(printed.index) == [*COLUMNS, "TOTAL"]
    assert printed[COLUMNS].sum() == printed["TOTAL"] == 3652846  # appendix C's total = section 5.1's
    shares = table6_published()
    shares = shares[(shares["table"] == "Table 6") & (shares["row"] == SHARE_ROW)].set_index("column")["value"]
    assert shares["Replace Obj"] == pytest.approx(100 * 570325 / 3652846)
    assert shares.sum() == pytest.approx(100.0)


def test_counts_are_read_from_the_world_and_the_coco_summaries() -> None:
    counts = {"replace_obj": 3, "swap_att": 2}
    model, world = trohn_text_counts(_summary(counts), "h.json")
    assert model == "clip_trohn_text" and world == {s: counts.get(s, 0) for s in TABLE6_SUBSETS}
    assert trohn_text_counts(_summary(counts, key="negatives"), "h.json")[1] == world  # the coco trainer's key


@pytest.mark.parametrize(
    "summary,named",
    [
        ({"model": "m", "trainer": "contrastive", "samples": {}}, "key trainer"),
        ([1, 2], "key trainer"),
        ({"model": "m", "trainer": "negclip", "samples": {"negatives": 5}}, "samples.by_subset"),
        (_summary({"replace_objs": 1}), "samples.by_subset.replace_objs"),
        (_summary({"replace_obj": -1}), "expected a count >= 0"),
        (_summary({"replace_obj": True}), "expected a count >= 0"),
        (_summary({"replace_obj": 1.5}), "expected a count >= 0"),
    ],
)
def test_bad_summaries_are_refused_naming_the_file_and_key(summary, named: str) -> None:
    with pytest.raises(InputError, match="h.json: key") as err:
        trohn_text_counts(summary, "h.json")
    assert named in str(err.value)


def test_the_trainers_summary_counts_the_negatives_it_made_on_a_tiny_world() -> None:
    world = generate_world(unit_world(n_train=40, n_val=4, n_test=4))
    data = TrainData.from_world(world, lambda texts: torch.zeros((len(texts), 4), dtype=torch.long), "tiny world")
    source = RECIPES["negclip"].build(data, make_config(TrainConfig))
    naive = Counter(source.negatives["subset"])
    _, counts = trohn_text_counts({"model": "m", "trainer": "negclip", "samples": source.stats()}, "history.json")
    assert counts == {s: naive.get(s, 0) for s in TABLE6_SUBSETS}
    assert sum(counts.values()) == len(source.negatives) <= len(data)  # at most one per train caption


def test_the_command_writes_the_table_beside_the_printed_counts(tmp_path: Path) -> None:
    history = tmp_path / "clip_trohn_text" / "history.json"
    history.parent.mkdir()
    history.write_text(json.dumps(_summary(dict.fromkeys(TABLE6_SUBSETS, 10))), encoding="utf-8")
    out = tmp_path / "tables" / "table6.csv"
    assert main(["trohn-text-table", str(history), "--out-csv", str(out)]) == 0
    table = pd.read_csv(out)
    assert set(table["status"]) == {"compared"} and len(table) == 15
    total = table[(table["row"] == INSTANCES_ROW) & (table["column"] == "TOTAL")].iloc[0]
    assert (total["value"], total["published"]) == (70.0, 3652846.0)
    md = out.with_suffix(".md").read_text(encoding="utf-8")
    assert "# instances ← clip_trohn_text" in md and out.with_suffix(".tex").is_file()
    before = {p.name: p.read_bytes() for p in out.parent.iterdir()}
    assert main(["trohn-text-table", str(history), "--out-csv", str(out)]) == 0  # deterministic bytes
    assert {p.name: p.read_bytes() for p in out.parent.iterdir()} == before


def test_no_hard_negative_at_all_is_a_table_of_zeros_without_shares(tmp_path: Path) -> None:
    """The COCO fine-tune of an LLM that followed no template (the small COCO DAG): zero instances, no share."""
    history = tmp_path / "clip_trohn_text" / "history.json"
    history.parent.mkdir()
    history.write_text(json.dumps(_summary({}, key="negatives")), encoding="utf-8")
    out = tmp_path / "table6.csv"
    assert main(["trohn-text-table", str(history), "--out-csv", str(out)]) == 0
    table = pd.read_csv(out)
    counts = table[table["row"] == INSTANCES_ROW]
    assert len(counts) == len(TABLE6_SUBSETS) + 1 and (counts["value"] == 0).all()
    shares = table[table["row"] == SHARE_ROW]  # 0 of 0: no share regenerated, the published ones kept
    assert len(shares) == len(TABLE6_SUBSETS) and shares["value"].isna().all() and shares["published"].notna().all()


def test_the_command_refuses_a_summary_of_another_trainer(tmp_path: Path, capsys) -> None:
    history = tmp_path / "history.json"
    history.write_text(json.dumps({"model": "clip", "trainer": "contrastive", "samples": {"samples": 5}}))
    out = tmp_path / "out" / "table6.csv"
    assert main(["trohn-text-table", str(history), "--out-csv", str(out)]) == EXIT_INPUT
    err = capsys.readouterr().err
    assert f"{history}: key trainer" in err and "Traceback" not in err
    assert not out.parent.exists()


def test_two_summaries_of_one_model_are_refused(tmp_path: Path) -> None:
    paths = []
    for k in range(2):
        path = tmp_path / f"h{k}.json"
        path.write_text(json.dumps(_summary({"replace_obj": 1}, model="m")), encoding="utf-8")
        paths.append(path)
    with pytest.raises(InputError, match="h1.json: key model: 'm' again"):
        trohn_text_comparison(paths)
