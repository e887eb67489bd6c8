"""MCIC-COCO's dataset statistics regenerated from its released files, beside the published numbers."""

from __future__ import annotations

import os
from collections.abc import Mapping

import pandas as pd

from itmbench.papers.mcic import released as mcic_source
from itmbench.papers.statistics import compare_with_published, load_published, regenerated_frame
from itmbench.sources._common import FLOAT, INT, STRING, typed_frame
from itmbench.sources.released import resolve

# What is known about each published number the files do not reproduce, keyed (table, row, column).
NOTES: dict[tuple[str, str, str], str] = {
    ("Table 1", "dev", "#unique images"): (
        "the released dev file names 2,384 distinct images (1,664 with 5 examples, 385 with 1, the rest 2-6), not 2,000"
    ),
    ("Table 1", "test", "#unique images"): (
        "the released test file names 2,621 distinct images (1,679 with 5 examples, 619 with 1, the rest "
        "2-6), not 2,000"
    ),
    ("Table 1", "train", "#unique images"): "the train split is a Git LFS object, not mirrored",
    ("Table 1", "train", "# instances"): "the train split is a Git LFS object, not mirrored",
    ("Table 1", "total", "#unique images"): "needs the train split (Git LFS object, not mirrored)",
    ("Table 1", "total", "# instances"): "needs the train split (Git LFS object, not mirrored)",
    ("section 3.3 text", "all splits", "instances"): "needs the train split (Git LFS object, not mirrored)",
}


def mcic_regenerated(splits: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """MCIC Table 1 numbers regenerated from the split tables given ({'dev': ..., 'test': ...})."""
    rows: list[tuple[str, str, str, float, str]] = []
    for split, table in splits.items():
        source = f"mc_mscoco_{split}.txt"
        rows.append(("Table 1", split, "#unique images", table["image"].nunique(), source))
        rows.append(("Table 1", split, "# instances", len(table), source))
    if {"dev", "test", "train"} <= set(splits):
        images = pd.concat([splits[name]["image"] for name in ("dev", "test", "train")]).nunique()
        instances = sum(len(splits[name]) for name in ("dev", "test", "train"))
        rows.append(("Table 1", "total", "#unique images", images, "mc_mscoco_{dev,test,train}.txt"))
        rows.append(("Table 1", "total", "# instances", instances, "mc_mscoco_{dev,test,train}.txt"))
        rows.append(("section 3.3 text", "all splits", "instances", instances, "mc_mscoco_{dev,test,train}.txt"))
    return regenerated_frame(rows)


def mcic_statistics(splits: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """MCIC-COCO Table 1 beside the published values (train and total need the unmirrored train split)."""
    return compare_with_published(mcic_regenerated(splits), load_published("mcic"), "mcic")


def mcic_answer_prior(splits: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Share of each answer position per split: the accuracy of always answering that position.

    The options are sorted alphabetically, so positions are not uniform (chance is 20%).
    Columns: split: string, answer_index: int64, count: int64, n: int64, share: float64,
    accuracy_always (x100): float64, uniform: float64 (20.0), difference (accuracy - uniform): float64.
    """
    cols: dict[str, list] = {
        name: []
        for name in ("split", "answer_index", "count", "n", "share", "accuracy_always", "uniform", "difference")
    }
    uniform = 100.0 / mcic_source.N_OPTIONS
    for split, table in splits.items():
        counts = table["answer_index"].value_counts().reindex(range(mcic_source.N_OPTIONS), fill_value=0)
        for index, count in counts.items():
            share = count / len(table) if len(table) else float("nan")
            cols["split"].append(split)
            cols["answer_index"].append(int(index))
            cols["count"].append(int(count))
            cols["n"].append(len(table))
            cols["share"].append(float(share))
            cols["accuracy_always"].append(100.0 * float(share))
            cols["uniform"].append(uniform)
            cols["difference"].append(100.0 * float(share) - uniform)
    schema = {
        "split": STRING,
        "answer_index": INT,
        "count": INT,
        "n": INT,
        "share": FLOAT,
        "accuracy_always": FLOAT,
        "uniform": FLOAT,
        "difference": FLOAT,
    }
    return typed_frame(cols, schema)


def from_mirror(mirror: str | os.PathLike) -> pd.DataFrame:
    """Regenerate the paper's dataset statistics from the released files in a mirror folder."""
    splits = {
        split: mcic_source.read_mcic_txt(resolve(f"mcic_{split}", mirror, must_exist=True), split)
        for split in ("dev", "test")
    }
    return mcic_statistics(splits)
