"""CxC's appendix Table 3 (DE_I2T and its ablations) filled from metrics, beside the printed values."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from itmbench.papers.cxc.tables import ABLATIONS, ablation_long, ablation_models
from itmbench.papers.tables import load_published
from itmbench.papers.world import WORLD_TABLES, world_comparison, write_world_paper_tables

ABLATION_MODELS = {
    "baseline": "de_i2t",
    "small batch size": "de_i2t_small_batch",
    "no pretraining": "de_i2t_scratch",
    "ResNet-152": "de_i2t_resnet",
}
DIRECTIONS = ("i2t", "t2i", "t2t", "i2i")


def _value(model_index: int, direction: str, positives: str, k: str) -> float:
    """A distinct number per (model, direction, positives, K): a cell read from the wrong key shows."""
    return (
        10.0 * model_index
        + DIRECTIONS.index(direction)
        + (0.5 if positives == "cxc" else 0.0)
        + {"R@1": 0.0, "R@5": 0.1, "R@10": 0.2, "MedR": 0.3}[k]
    )


def _doc(model: str, index: int) -> dict:
    metrics = {}
    for direction in DIRECTIONS:
        for positives in ("coco", "cxc"):
            for k in ("R@1", "R@5", "R@10", "MedR"):
                v = _value(index, direction, positives, k)
                metrics[f"{direction}/{positives}/{k}"] = {"value": v, "lo": v - 1.0, "hi": v + 1.0, "n": 100}
    for name in ("sts", "sis", "sits"):
        metrics[f"{name}/spearman"] = {"value": 40.0, "lo": 39.0, "hi": 41.0, "std": 1.0}
    return {"benchmark": "cxc", "model": model, "confidence": 0.95, "metrics": metrics}


def _metrics(models=("vse", *ABLATION_MODELS.values())) -> dict:
    return {"cxc": {m: _doc(m, i) for i, m in enumerate(models)}}


def _options() -> dict:
    return {"ablations": ABLATION_MODELS}


def test_each_cell_reads_its_direction_positives_and_k_with_its_interval() -> None:
    long = ablation_long(_metrics(), ABLATION_MODELS)
    index = {m: i for i, m in enumerate(("vse", *ABLATION_MODELS.values()))}
    names = {"Image → Text": "i2t", "Text → Image": "t2i", "Text → Text": "t2t", "Image → Image": "i2i"}
    assert len(long) == 4 * (3 + 4) * 2  # four rows; MS-COCO three directions, CxC four; R@1 and R@10
    for r in long.itertuples():
        ablation = r.row.removeprefix("DE_I2T (").removesuffix(")")
        model = ABLATION_MODELS[ablation]
        direction, k = names[r.column.rsplit(" ", 1)[0]], r.column.rsplit(" ", 1)[1]
        expected = _value(index[model], direction, "coco" if r.block == "MS-COCO" else "cxc", k)
        assert (r.model, r.value, r.lo, r.hi) == (model, expected, expected - 1.0, expected + 1.0)
    assert not ((long["block"] == "MS-COCO") & long["column"].str.startswith("Image → Image")).any()


def test_the_layout_is_the_printed_one_beside_the_published_values() -> None:
    out = world_comparison("cxc", _metrics(), {"vse": "VSE++", "de_i2t": "DE_I2T"}, {}, _options())
    table = out[out["table"] == "Appendix Table 3"]
    printed = load_published("cxc")
    printed = printed[printed["table"] == "Appendix Table 3"]
    key = ["block", "row", "column"]
    # every printed cell has a world value beside it, and the world has no cell the paper does not print
    assert set(map(tuple, table[key].values)) == set(map(tuple, printed[key].values))
    assert set(table["status"]) == {"compared"}
    cell = table[(table["block"] == "CxC") & (table["row"] == "DE_I2T (ResNet-152)")]
    cell = cell[cell["column"] == "Image → Image R@10"].iloc[0]
    assert cell["published"] == 76.5 and cell["regenerated"] == _value(4, "i2i", "cxc", "R@10")
    assert [r.removeprefix("DE_I2T (").removesuffix(")") for r in dict.fromkeys(table["row"])] == list(ABLATIONS)


def test_the_ablations_leave_tables_2_to_5_and_the_baseline_stays() -> None:
    out = world_comparison("cxc", _metrics(), {"vse": "VSE++", "de_i2t": "DE_I2T"}, {}, _options())
    main = out[out["table"].isin(["Table 2", "Table 3", "Table 4", "Table 5"])]
    models = set(main["model"].dropna())
    assert models == {"vse", "de_i2t"}


def test_a_source_without_the_ablations_shows_the_printed_rows_alone() -> None:
    out = world_comparison("cxc", _metrics(("vse",)), {"vse": "VSE++"}, {}, _options())
    table = out[out["table"] == "Appendix Table 3"]
    assert len(table) == 56 and set(table["status"]) == {"not_regenerated"}


def test_bad_ablation_mappings_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"report.cxc.ablations: unknown ablations \['ResNet-50'\]"):
        ablation_models({"ablations": {"ResNet-50": "de_i2t_resnet"}})
    with pytest.raises(ValueError, match=r"models \['de_i2t'\] stand for more than one ablation"):
        ablation_models({"ablations": {"baseline": "de_i2t", "no pretraining": "de_i2t"}})
    metrics = _metrics()
    del metrics["cxc"]["de_i2t_scratch"]["metrics"]["t2t/coco/R@10"]
    with pytest.raises(ValueError, match=r"cxc/de_i2t_scratch.json: no t2t/coco/R@10"):
        ablation_long(metrics, ABLATION_MODELS)


def test_written_as_csv_md_tex(tmp_path: Path) -> None:
    files = []
    for model, doc in _metrics()["cxc"].items():
        path = tmp_path / "metrics" / "cxc" / f"{model}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc))
        files.append(path)
    paths = write_world_paper_tables("cxc", files, tmp_path / "out", {"vse": "VSE++"}, {}, _options())
    assert "appendix_table3" in WORLD_TABLES["cxc"]
    names = {p.name for p in paths}
    assert {"appendix_table3.csv", "appendix_table3.md", "appendix_table3.tex"} <= names
    csv = pd.read_csv(tmp_path / "out" / "appendix_table3.csv")
    assert set(csv["table"]) == {"Appendix Table 3"} and len(csv) == 56
    md = (tmp_path / "out" / "appendix_table3.md").read_text()
    assert "DE_I2T (small batch size) ← de_i2t_small_batch" in md and "itm-clip-tiny-rn" in md
    assert r"\begin{tabular}" in (tmp_path / "out" / "appendix_table3.tex").read_text()
