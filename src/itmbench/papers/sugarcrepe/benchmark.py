"""SugarCrepe (Hsieh et al. 2023) on its own: image-to-text hard negatives of seven edit subtypes, built in the world.

Instance: an image, its positive caption and one hard-negative caption made by one edit of a
subtype: replace-obj / replace-att / replace-rel, swap-obj / swap-att, add-obj / add-att. A model
is right when it scores the positive caption above the negative for the image (strict `>`: a tie
counts as wrong). Chance 50%.

Construction on `split` (the test split) is the shared edit stage (`itmbench.negatives.edits`):
for each image and subset its captions are tried in a seeded random order, each gets one edit of
the subset realised as a minimal text edit, and an edit still true of the image by the world's
truth function is rejected (SugarCrepe's filter of false negatives), until
`instances_per_image_subset` are kept. With the same seed and settings it is exactly BiVLC's step 0
(BiVLC adds generated negative images to these instances).

Canonical tables (the released files' columns first: `itmbench.papers.sugarcrepe.released`):
- `instances`: id, subset, type, subtype, filename, image_id, caption, negative_caption, then
  caption_id, negative_caption_id (item ids the scorers embed), then the world-only
  negative_structure, edit. In the world `filename` is 'world:<image_id>'; from the released files
  (`from_released`) the item ids are -1 (SugarCrepe names no COCO caption ids) and `id` is the key
  within its subset file, so an instance is (subset, id).
- construction only: `edits` (every proposed edit and whether it was true of its image) and
  `stages` (edits proposed, edits true of the image, instances kept, per subset);
- new items: `extra_captions` (caption_id, image_id = -1, split, text, structure): the negative
  captions, written as an items folder `extra_items/` with no image; `items` lists every item a model
  must embed.

Metric (`summarize`): accuracy per subtype (Wilson interval), the mean over the subtypes present
(SugarCrepe's summary; a percentile bootstrap resampling instances within each subtype), and the
accuracy pooled over all instances (the "SugarCrepe" column BiVLC's paper prints: its 76.56 for
CLIP is the pooled accuracy of the released per-instance file, whose mean over subtypes is 73.08).
One scorer serves the world and the released files: `summarize` reads per-instance `correct` flags
(or s_pos / s_neg), e.g. GPT-4V's released answers through `gpt4v_correct`.

Decisions where the paper is silent (config parameters with these defaults): one instance per
(image, subset); new caption ids = `id_offset` + instance id (as BiVLC's).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from itmbench.io import atomic_path, read_parquet_checked, write_parquet
from itmbench.metrics.accuracy import accuracy_from_correct
from itmbench.negatives.captions import SUBSETS, split_subset
from itmbench.negatives.edits import (
    EDIT_COLUMNS,
    INSTANCE_COLUMNS,
    _percent_interval,
    _rate_row,
    _value_row,
    edit_stage,
)
from itmbench.papers.sugarcrepe.config import SugarCrepeConfig
from itmbench.scoring.embed import EmbeddingCache, pair_dots
from itmbench.scoring.pairs import PairScores, pair_frame
from itmbench.world.captions import CaptionStructure
from itmbench.world.generate import World
from itmbench.world.scene import Scene
from itmbench.world.truth import caption_fits

CHANCE_PERCENT = 50.0
TABLES: dict[str, tuple[str, ...]] = {
    "instances": INSTANCE_COLUMNS,
    "edits": EDIT_COLUMNS,
    "stages": ("stage", "subset", "type", "subtype", "n"),
}
CONSTRUCTION_TABLES = ("edits", "stages")
WORLD_ONLY_COLUMNS = {"instances": ("negative_structure", "edit")}
STAGES = ("edits_proposed", "edits_true_of_image", "instances")
EXTRA_DIR = "extra_items"
EXTRA_CAPTION_COLUMNS = ("caption_id", "image_id", "split", "text", "structure")
ITEM_COLUMNS = ("kind", "item_id")
SCORE_COLUMNS = (
    "id",
    "subset",
    "type",
    "subtype",
    "image_id",
    "caption_id",
    "negative_caption_id",
    "s_pos",
    "s_neg",
    "correct",
)


# --- construction ----------------------------------------------------------------------------------


def build(world: World, cfg: SugarCrepeConfig, **inputs: Any) -> dict[str, pd.DataFrame]:
    """Build SugarCrepe in the world (the shared edit stage); every table, items last."""
    if inputs:
        raise TypeError(f"sugarcrepe build: unexpected inputs {sorted(inputs)}; expected none")
    instances, edits, _ = edit_stage(world, cfg)
    extra_captions = pd.DataFrame(
        {
            "caption_id": instances["negative_caption_id"].to_numpy(np.int64),
            "image_id": np.full(len(instances), -1, dtype=np.int64),
            "split": cfg.split,
            "text": instances["negative_caption"].to_numpy(),
            "structure": instances["negative_structure"].to_numpy(),
        },
        columns=list(EXTRA_CAPTION_COLUMNS),
    ).astype({"caption_id": "int64", "image_id": "int64"})
    return {
        "instances": instances[list(INSTANCE_COLUMNS)],
        "edits": edits[list(EDIT_COLUMNS)],
        "stages": _stages(instances, edits, cfg.subsets),
        "extra_captions": extra_captions,
        "items": _items(instances),
    }


def _stages(instances: pd.DataFrame, edits: pd.DataFrame, subsets: tuple[str, ...]) -> pd.DataFrame:
    """Survivors of each stage per subset (long form)."""
    counts = {
        "edits_proposed": edits["subset"].value_counts(),
        "edits_true_of_image": edits.loc[edits["true_of_image"], "subset"].value_counts(),
        "instances": instances["subset"].value_counts(),
    }
    rows = [
        (stage, subset, *split_subset(subset), int(counts[stage].get(subset, 0)))
        for stage in STAGES
        for subset in subsets
    ]
    return pd.DataFrame(rows, columns=list(TABLES["stages"])).astype({"n": "int64"})


def _items(instances: pd.DataFrame) -> pd.DataFrame:
    """Every image and caption a model must embed, sorted, each once."""
    images = np.unique(instances["image_id"].to_numpy(np.int64))
    captions = np.unique(np.concatenate([instances["caption_id"], instances["negative_caption_id"]]).astype(np.int64))
    return pd.DataFrame(
        {
            "kind": ["image"] * len(images) + ["caption"] * len(captions),
            "item_id": np.concatenate([images, captions]).astype(np.int64),
        }
    )


def from_released(released: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The canonical tables of SugarCrepe's released subset files (`released.load_sugarcrepe`): no item ids."""
    missing = [c for c in _required_columns("instances") if c not in released.columns and not c.endswith("caption_id")]
    if missing:
        raise ValueError(f"sugarcrepe released instances: missing columns {missing}; expected released.INSTANCE_SCHEMA")
    instances = released.assign(caption_id=np.int64(-1), negative_caption_id=np.int64(-1))
    return {"instances": instances[list(_required_columns("instances"))].reset_index(drop=True)}


# --- files -------------------------------------------------------------------------------------------


def write(tables: Mapping[str, pd.DataFrame], out_dir: str | Path) -> None:
    """Write every table as parquet and the negative captions as `extra_items/`, atomically; items.parquet last."""
    out = Path(out_dir)
    missing = [n for n in ("instances", "items") if n not in tables]
    if missing:
        raise ValueError(f"sugarcrepe write to {out}: missing tables {missing}")
    for name in TABLES:
        if name in tables:
            write_parquet(out / f"{name}.parquet", tables[name])
    if "extra_captions" in tables:
        _write_extra(tables["extra_captions"], out / EXTRA_DIR)
    write_parquet(out / "items.parquet", tables["items"][list(ITEM_COLUMNS)])


def _write_extra(captions: pd.DataFrame, d: Path) -> None:
    """The new captions as an items folder of the world's layout without images (images.npy holds none)."""
    d.mkdir(parents=True, exist_ok=True)
    with atomic_path(d / "images.npy") as tmp:
        with open(tmp, "wb") as fh:
            np.save(fh, np.zeros((0, 1, 1, 3), dtype=np.uint8))
    empty = pd.DataFrame({"image_id": np.zeros(0, np.int64), "split": pd.Series([], dtype=object)})
    write_parquet(d / "images.parquet", empty.assign(n_objects=np.zeros(0, np.int64)))
    write_parquet(d / "scenes.parquet", empty[["image_id"]].assign(scene=pd.Series([], dtype=object)))
    write_parquet(d / "captions.parquet", captions[list(EXTRA_CAPTION_COLUMNS)])


def _required_columns(name: str) -> tuple[str, ...]:
    """The columns a table must have: its columns less the world-only ones."""
    return tuple(c for c in TABLES[name] if c not in WORLD_ONLY_COLUMNS.get(name, ()))


# What `read` names when a file of the folder is absent.
FOLDER = "a SugarCrepe benchmark folder (run the sugarcrepe rule)"


def read(out_dir: str | Path) -> dict[str, pd.DataFrame]:
    """Read and validate a folder written by `write` (construction tables and new captions when present)."""
    d = Path(out_dir)
    tables = {
        name: read_parquet_checked(d / f"{name}.parquet", _required_columns(name), FOLDER)
        for name in TABLES
        if name not in CONSTRUCTION_TABLES or (d / f"{name}.parquet").exists()
    }
    tables["items"] = read_parquet_checked(d / "items.parquet", ITEM_COLUMNS, FOLDER)
    if (d / EXTRA_DIR / "captions.parquet").exists():
        tables["extra_captions"] = read_parquet_checked(
            d / EXTRA_DIR / "captions.parquet", EXTRA_CAPTION_COLUMNS, FOLDER
        )
    return tables


# --- audit -------------------------------------------------------------------------------------------


def audit(world: World, tables: Mapping[str, pd.DataFrame], cfg: SugarCrepeConfig) -> pd.DataFrame:
    """What only the world can check: the truth of every positive and negative caption, recomputed per subtype."""
    margin = cfg.relation_margin
    scenes = {int(i): Scene.from_json(s) for i, s in zip(world.scene_table["image_id"], world.scene_table["scene"])}
    positive = dict(zip(world.caption_table["caption_id"].to_numpy().tolist(), world.caption_table["structure"]))
    inst, edits = tables["instances"], tables["edits"]
    image = inst["image_id"].to_numpy(np.int64)
    pos_fits = np.array(
        [caption_fits(CaptionStructure.from_json(positive[int(c)]), scenes[int(i)], margin)
         for c, i in zip(inst["caption_id"], image)],
        dtype=bool,
    )  # fmt: skip
    neg_fits = np.array(
        [caption_fits(CaptionStructure.from_json(s), scenes[int(i)], margin)
         for s, i in zip(inst["negative_structure"], image)],
        dtype=bool,
    )  # fmt: skip
    edit_true = np.array(
        [caption_fits(CaptionStructure.from_json(s), scenes[int(i)], margin)
         for s, i in zip(edits["negative_structure"], edits["image_id"])],
        dtype=bool,
    )  # fmt: skip
    same_text = (inst["caption"] == inst["negative_caption"]).to_numpy(bool)
    rows: list[dict[str, Any]] = []
    for subset in (*cfg.subsets, "overall"):
        i = np.ones(len(inst), bool) if subset == "overall" else (inst["subset"] == subset).to_numpy(bool)
        e = np.ones(len(edits), bool) if subset == "overall" else (edits["subset"] == subset).to_numpy(bool)
        n = int(i.sum())
        rows += [
            _value_row(subset, "edits proposed", e.sum()),
            _rate_row(subset, "edits true of the image, rejected (%)", int(edit_true[e].sum()), int(e.sum())),
            _value_row(subset, "instances", n),
            _rate_row(subset, "positive caption fits the image (%)", int(pos_fits[i].sum()), n),
            _rate_row(subset, "negative caption fits the image (%)", int(neg_fits[i].sum()), n),
            _rate_row(subset, "negative text equals the positive (%)", int(same_text[i].sum()), n),
        ]
    return pd.DataFrame(rows, columns=["row", "column", "value", "lo", "hi"]).astype(
        {"value": "float64", "lo": "float64", "hi": "float64"}
    )


# --- scoring -----------------------------------------------------------------------------------------


def score_dual(tables: Mapping[str, pd.DataFrame], cache: EmbeddingCache) -> pd.DataFrame:
    """One row per instance: s(positive, image), s(negative, image) and whether the positive scores higher."""
    return _score_frame(tables["instances"], lambda captions, images: pair_dots(cache, captions, images))


def pairs_needed(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """The (caption_id, image_id) pairs a cross scorer must score: 2 per instance."""
    inst = tables["instances"]
    image = inst["image_id"].to_numpy(np.int64)
    return pair_frame(
        np.concatenate([inst["caption_id"].to_numpy(np.int64), inst["negative_caption_id"].to_numpy(np.int64)]),
        np.concatenate([image, image]),
    )


def score_pairs(tables: Mapping[str, pd.DataFrame], pairs: PairScores) -> pd.DataFrame:
    """The per-instance table of `score_dual`, from a cross scorer's pair scores."""
    return _score_frame(tables["instances"], pairs.get)


def _score_frame(inst: pd.DataFrame, pair_score: Any) -> pd.DataFrame:
    image = inst["image_id"].to_numpy(np.int64)
    c0, c1 = inst["caption_id"].to_numpy(np.int64), inst["negative_caption_id"].to_numpy(np.int64)
    s_pos, s_neg = np.asarray(pair_score(c0, image), np.float64), np.asarray(pair_score(c1, image), np.float64)
    return pd.DataFrame(
        {
            "id": inst["id"].to_numpy(np.int64),
            "subset": inst["subset"].to_numpy(),
            "type": inst["type"].to_numpy(),
            "subtype": inst["subtype"].to_numpy(),
            "image_id": image,
            "caption_id": c0,
            "negative_caption_id": c1,
            "s_pos": s_pos,
            "s_neg": s_neg,
            "correct": s_pos > s_neg,  # strict: a tie counts as wrong
        },
        columns=list(SCORE_COLUMNS),
    )


def gpt4v_correct(answers: pd.DataFrame, order: str) -> pd.DataFrame:
    """GPT-4V's released answers of one order (`released.load_gpt4v_answers`) as the table `summarize` reads."""
    part = answers[answers["order"] == order]
    if part.empty:
        raise ValueError(f"GPT-4V answers: none in order {order!r}; orders present: {sorted(set(answers['order']))}")
    return part[["id", "subset", "type", "subtype", "correct"]].reset_index(drop=True)


# --- metrics -----------------------------------------------------------------------------------------


def _correct(scores: pd.DataFrame) -> np.ndarray:
    if "correct" in scores.columns:
        return scores["correct"].to_numpy(bool)
    if {"s_pos", "s_neg"} <= set(scores.columns):
        return (scores["s_pos"] > scores["s_neg"]).to_numpy(bool)
    raise ValueError("SugarCrepe scores: expected a column `correct`, or s_pos and s_neg")


def _wilson(correct: np.ndarray, confidence: float) -> dict[str, Any]:
    if len(correct) == 0:
        return {"value": None, "lo": None, "hi": None, "n": 0}
    acc = accuracy_from_correct(correct, confidence)
    lo, hi = _percent_interval(acc.percent, acc.ci_percent)
    return {"value": acc.percent, "lo": lo, "hi": hi, "n": acc.n, "n_correct": acc.successes}


def mean_over_subtypes(correct: np.ndarray, subset: np.ndarray) -> float:
    """The mean (%) of the per-subtype accuracies over the subtypes present."""
    names = [s for s in SUBSETS if (subset == s).any()]
    return float(np.mean([100.0 * correct[subset == s].mean() for s in names])) if names else float("nan")


def _stratified_interval(
    correct: np.ndarray, subset: np.ndarray, n_boot: int, seed: int, confidence: float
) -> tuple[float, float]:
    """Percentile bootstrap of the mean over subtypes, resampling instances within each subtype (seeded)."""
    names = [s for s in SUBSETS if (subset == s).any()]
    if not names:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    boots = np.zeros(n_boot)
    for s in names:
        flags = correct[subset == s].astype(float)
        draws = rng.integers(0, len(flags), size=(n_boot, len(flags)))
        boots += 100.0 * flags[draws].mean(axis=1)
    boots /= len(names)
    lo, hi = np.percentile(boots, [50 * (1 - confidence), 50 * (1 + confidence)])
    return float(lo), float(hi)


def summarize(scores: pd.DataFrame, n_boot: int = 1000, seed: int = 0, confidence: float = 0.95) -> dict:
    """Accuracy (%) per subtype (Wilson), the mean over subtypes (stratified bootstrap) and the pooled accuracy."""
    correct = _correct(scores)
    subset = scores["subset"].to_numpy().astype(str)
    unknown = sorted(set(subset) - set(SUBSETS))
    if unknown:
        raise ValueError(f"SugarCrepe scores: unknown subsets {unknown}; expected some of {SUBSETS}")
    mean = mean_over_subtypes(correct, subset)
    lo, hi = _stratified_interval(correct, subset, n_boot, seed, confidence)
    metrics: dict[str, dict[str, Any]] = {
        "mean_over_subtypes": {
            "value": None if np.isnan(mean) else mean,
            "lo": None if np.isnan(lo) else min(lo, mean),
            "hi": None if np.isnan(hi) else max(hi, mean),
            "n": len(correct),
        },
        "pooled": _wilson(correct, confidence),
    }
    for s in SUBSETS:
        if (subset == s).any():
            metrics[s] = _wilson(correct[subset == s], confidence)
    return {
        "metrics": metrics,
        "chance": CHANCE_PERCENT,
        "n_instances": len(correct),
        "confidence": confidence,
        "ties_count_as_wrong": True,
        "interval": f"Wilson {confidence:.0%}; mean_over_subtypes: percentile bootstrap within each subtype "
        f"({n_boot}, seed {seed})",
    }


# --- the coco source: the released subset files on COCO images ----------------------------------------
