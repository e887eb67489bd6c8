"""The benchmark registry and the item store's extra folders (new items that benchmarks add)."""

from __future__ import annotations

import importlib

import numpy as np
import pandas as pd
import pytest
from unit_world import unit_world

from itmbench.io import write_parquet
from itmbench.papers.published import load_published
from itmbench.papers.registry import BENCHMARKS, PAPERS, benchmark
from itmbench.scoring.embed import ItemStore
from itmbench.world.generate import generate_world, write_world

# The parts of a benchmark's package the workflow calls, and what each must have.
INTERFACE = {
    "build": ("build",),
    "canonical": ("write", "read"),
    "audit": ("audit",),
    "score": ("score_dual", "summarize"),
}


def test_every_registered_benchmark_has_the_interface():
    for name, entry in BENCHMARKS.items():
        for part, attrs in INTERFACE.items():
            for attr in attrs:
                assert hasattr(entry.part(part), attr), f"{name}.{part} lacks {attr}"
        assert hasattr(entry.part("build"), entry.config_class), f"{name}.build lacks {entry.config_class}"
        config = importlib.import_module(f"itmbench.papers.{name}.config")
        assert getattr(config, entry.config_class).SECTION == name
        for dep in entry.depends_on:
            assert dep in BENCHMARKS


def test_each_benchmark_table_prints_at_its_papers_printed_precision():
    """A benchmark's `decimals` is the most common printed precision of its paper's results tables (those
    the world fills) in published_results.csv; CxC prints every median rank as a whole number."""
    for name, entry in BENCHMARKS.items():
        if name not in PAPERS:
            assert entry.decimals == 1 and not entry.column_decimals, name  # no paper: the fixed default
            continue
        printed = load_published(name)
        printed = printed[printed["table"].isin(PAPERS[name].world_tables.values())]
        if printed.empty:  # no printed cell of its world tables transcribed (ARO: docs/aro.md): the house's 2
            assert entry.decimals == 2 and not entry.column_decimals, name
            continue
        counts = printed["decimals"].value_counts()
        assert entry.decimals == max(counts.index, key=lambda d: (counts[d], d)), (name, counts.to_dict())
    cxc = load_published("cxc")
    medians = cxc[cxc["table"].isin(PAPERS["cxc"].world_tables.values()) & cxc["column"].str.endswith("med r")]
    assert len(medians) > 0 and set(medians["decimals"]) == {BENCHMARKS["cxc"].column_decimals["MedR"]} == {0}
    precision = BENCHMARKS["cxc"].column_precision(["t2i/cxc/MedR", "t2i/cxc/R@1", "sts/spearman"])
    assert precision == {"t2i/cxc/MedR": 0, "t2i/cxc/R@1": 1, "sts/spearman": 1}


def test_every_registered_paper_has_its_report_caption():
    """`snakemake --report` captions a paper's flagged tables and figures with workflow/report/<paper>.rst
    (workflow/rules/helpers/papers.smk): a registered paper without one breaks the report."""
    from pathlib import Path

    report = Path(__file__).resolve().parents[2] / "workflow" / "report"
    missing = [p for p in sorted(PAPERS) if not (report / f"{p}.rst").is_file()]
    assert missing == [], f"no caption file {report}/<paper>.rst for {missing}"


def test_unknown_benchmark_is_named():
    with pytest.raises(ValueError, match="unknown benchmark 'bisson'"):
        benchmark("bisson")


def test_truth_settings_come_from_the_world():
    cfg = benchmark("mcic").config({}, unit_world(relation_margin=0.11, max_objects=3))
    assert cfg.relation_margin == 0.11 and cfg.max_objects == 3
    with pytest.raises(ValueError, match="unknown keys"):
        benchmark("bison").config({"no_such_key": 1}, unit_world())


def _extra(tmp_path, image_ids, caption_ids):
    d = tmp_path / "extra"
    d.mkdir(exist_ok=True)
    np.save(d / "images.npy", np.full((len(image_ids), 64, 64, 3), 7, dtype=np.uint8))
    write_parquet(d / "images.parquet", pd.DataFrame({"image_id": image_ids, "split": "test", "n_objects": 1}))
    write_parquet(
        d / "captions.parquet",
        pd.DataFrame(
            {"caption_id": caption_ids, "image_id": -1, "split": "test", "text": "a new caption", "structure": "{}"}
        ),
    )
    return d


def test_item_store_reads_extra_item_folders(tmp_path):
    write_world(generate_world(unit_world(n_train=4, n_val=2, n_test=2)), tmp_path / "items")
    extra = _extra(tmp_path, [1_000_000_000], [1_000_000_005])
    store = ItemStore(tmp_path / "items", [extra])
    batch = store.image_batch(np.array([3, 1_000_000_000]))
    assert batch.shape == (2, 64, 64, 3) and (batch[1] == 7).all()
    assert store.texts(np.array([1_000_000_005])) == ["a new caption"]
    with pytest.raises(KeyError, match="no image with id 5"):
        store.image_batch(np.array([5_000]))


def test_item_store_refuses_colliding_ids(tmp_path):
    write_world(generate_world(unit_world(n_train=4, n_val=2, n_test=2)), tmp_path / "items")
    extra = _extra(tmp_path, [3], [1_000_000_005])
    with pytest.raises(ValueError, match="image id 3 is already defined"):
        ItemStore(tmp_path / "items", [extra])
