"""The world calibrated to COCO: each statistic COCO's released files or the papers give, beside the world's.

One row a statistic: the COCO value and its source, the world's value with a 95% interval, the
tolerance and whether the world's value lies within it. COCO values are computed at run time from
the released files (`raw`: a mirror's layout, `data/raw` in the workflow) where they are present;
where a file is absent the row carries the number a paper prints, with its citation, or says
"released file absent". Intervals: a mean's normal interval over its units, a share's Wilson
interval, a quantile's order-statistic interval; a count of the whole world (vocabulary, captions
per image) has none.

Ambiguity is measured on the test split, the world's gallery, as ECCV Caption measures it on COCO's
5k test images and 25k captions: a caption's true images (and an image's true captions) as a share
of the gallery, and the share of captions with a true image other than their own.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from itmbench.world.generate import World
from itmbench.world.truth import truth_matrix

Z95 = 1.959963984540054
TOKEN = re.compile(r"[a-z0-9]+")
ABSENT = "released file absent"
QUANTILES = {"10th percentile": 0.1, "median": 0.5, "90th percentile": 0.9}
CXC_TASKS = {"sts": "STS", "sis": "SIS", "sits": "SITS"}
N_MCIC_OPTIONS = 5
# BISON's construction counts (supplementary) (also `papers.bison.build.PUBLISHED_STAGE_COUNTS`).
BISON_STAGES = {"image pairs": 67_564, "query triples": 61_861, "verified triples": 54_253}
BISON_SOURCE = "BISON supplementary, Statistics of Data Collection Process (67,564 pairs; 61,861; 54,253)"
# What the calibration reads: these benchmarks' tables (`world_statistics`) and, with a mirror, these released files
# (`coco_statistics`): the inputs of the workflow's rule world_calibration.
CALIBRATION_BENCHES = ("bison", "cxc", "mcic")
CALIBRATION_RELEASED = (
    "mcic_dev",
    "mcic_test",
    "eccv_original_image_to_caption",
    "eccv_original_caption_to_image",
    "eccv_eccv_caption_to_image",
    "eccv_eccv_image_to_caption",
    *(f"cxc_{task}_{split}" for task in ("sts", "sis", "sits") for split in ("val", "test")),
)


@dataclass(frozen=True)
class Estimate:
    """A value with its 95% interval (NaN bounds: none)."""

    value: float
    lo: float = math.nan
    hi: float = math.nan


@dataclass(frozen=True)
class Tolerance:
    """Within: |world - coco| <= width ('absolute') or coco / width <= world <= coco * width ('ratio')."""

    kind: str
    width: float

    def text(self) -> str:
        return f"±{self.width:g}" if self.kind == "absolute" else f"×/÷ {self.width:g}"

    def holds(self, coco: float, world: float) -> bool:
        if self.kind == "absolute":
            return abs(world - coco) <= self.width + 1e-12
        if self.kind == "ratio":
            return coco / self.width <= world <= coco * self.width
        raise ValueError(f"unknown tolerance kind {self.kind!r}; expected 'absolute' or 'ratio'")


# --- estimates ----------------------------------------------------------------------------------


def mean_estimate(values: Sequence[float] | np.ndarray) -> Estimate:
    """Mean with its normal 95% interval (sample standard deviation over the units)."""
    x = np.asarray(values, dtype=float)
    if len(x) == 0:
        return Estimate(math.nan)
    m = float(x.mean())
    if len(x) < 2:
        return Estimate(m)
    half = Z95 * float(x.std(ddof=1)) / math.sqrt(len(x))
    return Estimate(m, m - half, m + half)


def share_estimate(k: int, n: int, scale: float = 100.0) -> Estimate:
    """k of n as a share (times `scale`) with its Wilson 95% interval."""
    if n == 0:
        return Estimate(math.nan)
    p = k / n
    denom = 1 + Z95**2 / n
    centre = (p + Z95**2 / (2 * n)) / denom
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n)) / denom
    return Estimate(scale * p, scale * max(0.0, centre - half), scale * min(1.0, centre + half))


def quantile_estimate(values: Sequence[float] | np.ndarray, q: float) -> Estimate:
    """The q-quantile (lower order statistic at rank ceil(n q)) with its distribution-free 95% interval."""
    x = np.sort(np.asarray(values, dtype=float))
    n = len(x)
    if n == 0:
        return Estimate(math.nan)
    rank = min(n, max(1, math.ceil(n * q)))
    half = Z95 * math.sqrt(n * q * (1 - q))
    lo = min(n, max(1, math.floor(n * q - half)))
    hi = min(n, max(1, math.ceil(n * q + half) + 1))
    return Estimate(float(x[rank - 1]), float(x[lo - 1]), float(x[hi - 1]))


def tokens(text: str) -> list[str]:
    """A caption's words: lower-cased runs of letters and digits (punctuation dropped)."""
    return TOKEN.findall(text.lower())


# --- the statistics, each as a function of plain data (tested against naive recounts) -----------


def caption_lengths(texts: Iterable[str]) -> np.ndarray:
    """Words per caption."""
    return np.array([len(tokens(t)) for t in texts], dtype=float)


def vocabulary_size(texts: Iterable[str]) -> int:
    """Distinct words over all the captions."""
    return len({w for t in texts for w in tokens(t)})


def per_query_share(query: np.ndarray, n_queries: int, gallery: int) -> Estimate:
    """Mean over queries of (positives of the query) / gallery, in percent. `query`: one entry per
    positive pair (the query's id, 0..n_queries-1); a query without positives counts 0."""
    counts = np.bincount(np.asarray(query, dtype=np.int64), minlength=n_queries)
    return mean_estimate(100.0 * counts / gallery)


def share_fitting_another(positive_images: dict[int, set[int]], own_image: dict[int, int]) -> Estimate:
    """Share (percent) of caption queries with a positive image other than their own."""
    k = sum(bool(images - {own_image[c]}) for c, images in positive_images.items())
    return share_estimate(k, len(positive_images))


def rating_rows(ratings: np.ndarray) -> dict[str, Estimate]:
    """A rating distribution (0-5): its mean, and the shares below 2 and at least 3 (CxC's positives)."""
    r = np.asarray(ratings, dtype=float)
    return {
        "mean rating": mean_estimate(r),
        "ratings < 2, %": share_estimate(int((r < 2).sum()), len(r)),
        "ratings >= 3, %": share_estimate(int((r >= 3).sum()), len(r)),
    }


def answer_position_shares(answer_index: np.ndarray) -> dict[int, Estimate]:
    """Share (percent) of instances whose answer is at each of MCIC's 5 positions."""
    a = np.asarray(answer_index, dtype=np.int64)
    counts = np.bincount(a, minlength=N_MCIC_OPTIONS)
    return {j: share_estimate(int(counts[j]), len(a)) for j in range(N_MCIC_OPTIONS)}


# --- the world's side -----------------------------------------------------------------------------


def world_truth(world: World, margin: float, max_objects: int, split: str = "test") -> tuple[np.ndarray, np.ndarray]:
    """The split's truth (captions x images) and each caption's own image column."""
    caps = world.caption_table
    rows = np.flatnonzero((caps["split"] == split).to_numpy())
    images = world.image_table
    image_ids = images.loc[images["split"] == split, "image_id"].to_numpy(dtype=np.int64)
    scenes = world.scenes()
    structures = world.structures()
    fits = truth_matrix([structures[i] for i in rows], [scenes[int(i)] for i in image_ids], margin, max_objects)
    own = np.searchsorted(image_ids, caps["image_id"].to_numpy(dtype=np.int64)[rows])
    return fits, own


def world_statistics(
    world: World, margin: float, max_objects: int, benches: dict[str, dict[str, pd.DataFrame]]
) -> dict[str, Estimate]:
    """Every statistic of the world, keyed by row name (benchmarks absent from `benches` are left out)."""
    texts = world.caption_table["text"].tolist()
    lengths = caption_lengths(texts)
    out: dict[str, Estimate] = {"caption length, mean (words)": mean_estimate(lengths)}
    for name, q in QUANTILES.items():
        out[f"caption length, {name} (words)"] = quantile_estimate(lengths, q)
    out["vocabulary (distinct words)"] = Estimate(float(vocabulary_size(texts)))
    per_image = world.caption_table.groupby("image_id").size()
    out["captions per image"] = Estimate(float(per_image.mean()))
    fits, own = world_truth(world, margin, max_objects)
    n_caps, n_imgs = fits.shape
    out["true images per caption, % of gallery"] = mean_estimate(100.0 * fits.sum(axis=1) / n_imgs)
    out["true captions per image, % of gallery"] = mean_estimate(100.0 * fits.sum(axis=0) / n_caps)
    others = fits.copy()
    others[np.arange(n_caps), own] = False
    out["captions that fit another image, %"] = share_estimate(int(others.any(axis=1).sum()), n_caps)
    if "cxc" in benches:
        for task, label in CXC_TASKS.items():
            for stat, est in rating_rows(benches["cxc"][task]["agg_score"].to_numpy()).items():
                out[f"CxC {label}: {stat}"] = est
    if "mcic" in benches:
        out.update(_mcic_world(benches["mcic"]))
    if "bison" in benches:
        stages = benches["bison"]["stages"]["count"].to_numpy(dtype=np.int64)
        out["BISON query triples, % of image pairs"] = share_estimate(int(stages[1]), int(stages[0]))
        out["BISON verified triples, % of image pairs"] = share_estimate(int(stages[2]), int(stages[0]))
    return out


def _mcic_world(tables: dict[str, pd.DataFrame]) -> dict[str, Estimate]:
    examples = tables["examples"]
    out = {"MCIC instances per image": mean_estimate(examples.groupby("image_id").size().to_numpy(dtype=float))}
    for j, est in answer_position_shares(examples["answer_index"].to_numpy()).items():
        out[f"MCIC answer at position {j}, %"] = est
    return out


# --- COCO's side: from the released files, else as printed ---------------------------------------


@dataclass(frozen=True)
class Coco:
    """A COCO value and where it comes from ('' value NaN: the file is absent and no paper prints it)."""

    value: float
    source: str


def _load(key: str, raw: Path | None) -> pd.DataFrame | None:
    """A released file read by its declared loader, or None when there is no such file under `raw`."""
    from itmbench.sources.loading import load_released
    from itmbench.sources.released import resolve

    if raw is None or not resolve(key, raw).is_file():
        return None
    return load_released(key, raw)


def _file(key: str) -> str:
    from itmbench.sources.released import released_file

    return released_file(key).filename


def coco_statistics(raw: str | Path | None) -> dict[str, Coco]:
    """Every COCO statistic keyed by row name: computed from the released files under `raw` where present."""
    raw = Path(raw) if raw else None
    out: dict[str, Coco] = {}
    mcic = [f for f in (_load("mcic_dev", raw), _load("mcic_test", raw)) if f is not None]
    if mcic:
        frame = pd.concat(mcic, ignore_index=True)
        texts = sorted({t for options in frame["options"] for t in options})
        source = f"mc_mscoco_dev.txt + mc_mscoco_test.txt: their {len(texts):,} distinct COCO captions"
        lengths = caption_lengths(texts)
        out["caption length, mean (words)"] = Coco(float(lengths.mean()), source)
        for name, q in QUANTILES.items():
            out[f"caption length, {name} (words)"] = Coco(quantile_estimate(lengths, q).value, source)
        out["vocabulary (distinct words)"] = Coco(float(vocabulary_size(texts)), source)
        out["MCIC instances per image"] = Coco(
            float(frame.groupby(["split", "image_id"]).size().mean()), "mc_mscoco_dev.txt + mc_mscoco_test.txt"
        )
        for j, est in answer_position_shares(frame["answer_index"].to_numpy()).items():
            out[f"MCIC answer at position {j}, %"] = Coco(est.value, "mc_mscoco_dev.txt + mc_mscoco_test.txt")
    else:
        out["vocabulary (distinct words)"] = Coco(9487.0, "BISON Section 4.1 (COCO training vocabulary of 9,487 words)")
        out["MCIC instances per image"] = Coco(
            (9999 + 10253) / 4000, "MCIC Table 1 (dev 9,999 + test 10,253 instances over 2,000 + 2,000 images)"
        )
    out.update(_eccv_coco(raw))
    for task, label in CXC_TASKS.items():
        frames = [f for f in (_load(f"cxc_{task}_val", raw), _load(f"cxc_{task}_test", raw)) if f is not None]
        if frames:
            ratings = pd.concat(frames, ignore_index=True)["agg_score"].to_numpy()
            for stat, est in rating_rows(ratings).items():
                out[f"CxC {label}: {stat}"] = Coco(est.value, f"{task}_val.csv + {task}_test.csv")
    stages = list(BISON_STAGES.values())
    out["BISON query triples, % of image pairs"] = Coco(100.0 * stages[1] / stages[0], BISON_SOURCE)
    out["BISON verified triples, % of image pairs"] = Coco(100.0 * stages[2] / stages[0], BISON_SOURCE)
    return out


def _eccv_coco(raw: Path | None) -> dict[str, Coco]:
    out: dict[str, Coco] = {}
    original = _load("eccv_original_image_to_caption", raw)
    if original is not None:
        out["captions per image"] = Coco(
            float(original.groupby("image_id").size().mean()), _file("eccv_original_image_to_caption")
        )
    else:
        out["captions per image"] = Coco(5.0, "CxC Section 1 (25k captions of 5k images per split)")
    n_images, n_captions = 5000, 25000  # the Karpathy 5k test split, printed in both papers
    if original is not None:
        n_images, n_captions = original["image_id"].nunique(), original["caption_id"].nunique()

    def positives_share(key: str, query: str, gallery: int, of: str, printed: tuple[float, int, str]):
        """A released association file's positives per query as % of the gallery, or the paper's printed mean
        (positives, of a gallery of, what)."""
        pairs = _load(key, raw)
        if pairs is None:
            mean, size, what = printed
            return pairs, Coco(100.0 * mean / size, f"ECCV Caption Section 1 ({mean} {what}, of {size:,})")
        queries = {c: i for i, c in enumerate(sorted(pairs[query].unique()))}
        q = pairs[query].map(queries).to_numpy()
        return pairs, Coco(per_query_share(q, len(queries), gallery).value, f"{_file(key)} over {gallery:,} {of}")

    c2i, out["true images per caption, % of gallery"] = positives_share(
        "eccv_eccv_caption_to_image", "caption_id", n_images, "images", (8.5, 5000, "positive images per caption")
    )
    _, out["true captions per image, % of gallery"] = positives_share(
        "eccv_eccv_image_to_caption", "image_id", n_captions, "captions", (17.9, 25000, "positive captions per image")
    )
    own_map = _load("eccv_original_caption_to_image", raw)
    if c2i is not None and own_map is not None:
        own = dict(zip(own_map["caption_id"].tolist(), own_map["image_id"].tolist()))
        positives: dict[int, set[int]] = {}
        for c, i in zip(c2i["caption_id"].tolist(), c2i["image_id"].tolist()):
            positives.setdefault(int(c), set()).add(int(i))
        out["captions that fit another image, %"] = Coco(
            share_fitting_another(positives, own).value,
            f"{_file('eccv_eccv_caption_to_image')} against {_file('eccv_original_caption_to_image')}",
        )
    return out


# --- the table --------------------------------------------------------------------------------------

# Row order and tolerance of every statistic; `why` where the world cannot meet it by design.
TOLERANCES: dict[str, Tolerance] = {
    "caption length, mean (words)": Tolerance("ratio", 1.25),
    **{f"caption length, {name} (words)": Tolerance("absolute", 2.0) for name in QUANTILES},
    "vocabulary (distinct words)": Tolerance("ratio", 2.0),
    "captions per image": Tolerance("absolute", 0.0),
    "true images per caption, % of gallery": Tolerance("ratio", 2.0),
    "true captions per image, % of gallery": Tolerance("ratio", 2.0),
    "captions that fit another image, %": Tolerance("absolute", 15.0),
    **{
        f"CxC {label}: {stat}": Tolerance("absolute", 0.5 if stat == "mean rating" else 10.0)
        for label in CXC_TASKS.values()
        for stat in ("mean rating", "ratings < 2, %", "ratings >= 3, %")
    },
    "MCIC instances per image": Tolerance("absolute", 0.5),
    **{f"MCIC answer at position {j}, %": Tolerance("absolute", 5.0) for j in range(N_MCIC_OPTIONS)},
    "BISON query triples, % of image pairs": Tolerance("absolute", 10.0),
    "BISON verified triples, % of image pairs": Tolerance("absolute", 10.0),
}
COLUMNS = ("COCO", "source", "world", "tolerance", "status")


def calibration_table(world: dict[str, Estimate], coco: dict[str, Coco]) -> pd.DataFrame:
    """The long table (row, column, value, lo, hi, note): one row a statistic, columns COCO, source, world,
    tolerance, status ('within' / 'outside' / why it cannot be decided)."""
    records = []

    def add(
        row: str, column: str, value: float = math.nan, lo: float = math.nan, hi: float = math.nan, note: str = ""
    ) -> None:
        records.append({"row": row, "column": column, "value": value, "lo": lo, "hi": hi, "note": note})

    for row, tolerance in TOLERANCES.items():
        c = coco.get(row)
        w = world.get(row)
        if c is None:
            add(row, "COCO", note=ABSENT)
            add(row, "source", note="–")
        else:
            add(row, "COCO", c.value)
            add(row, "source", note=c.source)
        if w is None or math.isnan(w.value):
            add(row, "world", note="benchmark not built")
        else:
            add(row, "world", w.value, w.lo, w.hi)
        add(row, "tolerance", note=tolerance.text())
        if c is None:
            status = ABSENT
        elif w is None or math.isnan(w.value):
            status = "no world value"
        else:
            status = "within" if tolerance.holds(c.value, w.value) else "outside"
        add(row, "status", note=status)
    return pd.DataFrame.from_records(records, columns=["row", "column", "value", "lo", "hi", "note"])


def calibration(
    world: World,
    margin: float,
    max_objects: int,
    benches: dict[str, dict[str, pd.DataFrame]],
    raw: str | Path | None,
    coco_of: Callable[[str | Path | None], dict[str, Coco]] = coco_statistics,
) -> pd.DataFrame:
    """The calibration table of a world (its benchmarks' tables in `benches`) against COCO (files under `raw`)."""
    return calibration_table(world_statistics(world, margin, max_objects, benches), coco_of(raw))
