"""CxC's audit against the world's truth: true positives never rated, the positives' precision and recall, Fig. 3."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from itmbench.metrics.intervals import bootstrap_interval, wilson_interval
from itmbench.papers.audit_rows import value_row
from itmbench.papers.cxc.build import _margin_from_inputs, _sis_pairs, _Split, _split_data, _sts_value, claim_atoms
from itmbench.papers.cxc.config import CxcConfig
from itmbench.papers.cxc.released import ITEM_COLUMNS, SAME_EXAMPLE_METHODS, TASKS
from itmbench.world.generate import World
from itmbench.world.scene import scene_arrays

TASK_LABELS = {"sts": "STS", "sis": "SIS", "sits": "SITS"}
HIST_EDGES = np.arange(0.0, 5.5, 0.5)
# The paper's quoted means (section 7): co-captions' STS 3.0, original pairs' SITS 4.85.
PAPER_COCAPTION_STS = 3.0
PAPER_ORIGINAL_SITS = 4.85
_CHUNK = 512


def _all_pairs_true_positives(sd: _Split, task: str, cfg: CxcConfig) -> set[tuple[int, int]]:
    """Every true positive pair of a split (ids; unordered for STS/SIS as (min, max); (caption, image) for SITS)."""
    if task == "sits":
        c, i = np.nonzero(sd.fits)
        return set(zip(sd.caption_ids[c].tolist(), sd.image_ids[i].tolist()))
    thr = cfg.threshold(task)
    out: set[tuple[int, int]] = set()
    if task == "sts":
        atoms = [claim_atoms(s) for s in sd.structures]
        vocab = {a: k for k, a in enumerate(sorted({a for s in atoms for a in s}, key=repr))}
        # captions x atoms, 0/1, sparse: a caption has a handful of the thousands of atoms, and the shared-atom
        # counts are exact integers either way (a dense product multiplied 25k x 25k x |atoms| mostly zeros)
        from scipy.sparse import csr_matrix

        cols = [vocab[a] for s in atoms for a in s]  # each atom once per caption: `claim_atoms` is a set
        counts = np.array([len(s) for s in atoms], dtype=np.int64)
        x = csr_matrix(
            (np.ones(len(cols), dtype=np.float64), np.asarray(cols, dtype=np.int64), np.r_[0, np.cumsum(counts)]),
            shape=(len(atoms), len(vocab)),
        )
        size = np.asarray(x.sum(axis=1)).ravel()
        xt = x.T.tocsr()
        ids = sd.caption_ids
        for start in range(0, len(ids), _CHUNK):
            rows = np.arange(start, min(start + _CHUNK, len(ids)))
            # columns from `start` on: a pair is kept only above the diagonal (c2 > c1 >= start)
            inter = np.rint((x[rows] @ xt[:, start:]).toarray())
            union = size[rows][:, None] + size[None, start:] - inter
            c1_fits = sd.fits[rows][:, sd.caption_image_row[start:]]  # [c1 in rows, c2]: c1 fits the image of c2
            c2_fits = sd.fits[start:, sd.caption_image_row[rows]].T  # [c1 in rows, c2]: c2 fits the image of c1
            cross = (c1_fits.astype(np.float64) + c2_fits.astype(np.float64)) / 2.0
            sim = _sts_value(inter, union, cross, cfg.sts_overlap_weight)
            upper = np.arange(start, len(ids))[None, :] > rows[:, None]
            r, c = np.nonzero((sim >= thr) & upper)
            out.update(zip(ids[rows[r]].tolist(), ids[start + c].tolist()))
        return out
    arrays = scene_arrays(sd.scenes, max_objects=max(1, max(len(s.objects) for s in sd.scenes)))
    ids = sd.image_ids
    n = len(ids)
    for start in range(0, n, 64):
        rows = np.arange(start, min(start + 64, n))
        i, j = np.meshgrid(rows, np.arange(n), indexing="ij")
        keep = j > i
        i, j = i[keep], j[keep]
        sim = _sis_pairs(arrays, i, j, cfg)
        hit = sim >= thr
        out.update(zip(ids[i[hit]].tolist(), ids[j[hit]].tolist()))
    return out


def _pair_keys(frame: pd.DataFrame, task: str) -> list[tuple[int, int]]:
    a, b = ITEM_COLUMNS[task]
    x = frame[f"{a}_id"].to_numpy(np.int64)
    y = frame[f"{b}_id"].to_numpy(np.int64)
    if task == "sits":
        return list(zip(x.tolist(), y.tolist()))
    return list(zip(np.minimum(x, y).tolist(), np.maximum(x, y).tolist()))


def _pct_row(row: str, column: str, k: int, n: int) -> dict[str, Any]:
    """`audit_rows.rate_row`, but 100 * k / n as CxC always computed it (rate_row: 100 * (k / n))."""
    lo, hi = wilson_interval(k, n)
    value = 100.0 * k / n if n else float("nan")
    return {"row": row, "column": column, "value": value, "lo": 100.0 * lo, "hi": 100.0 * hi}


def rating_histogram(scores: np.ndarray) -> np.ndarray:
    """Counts per 0.5-wide bin of [0, 5] (the last bin holds 5.0), as in the paper's Fig. 3."""
    return np.histogram(np.asarray(scores, dtype=np.float64), bins=HIST_EDGES)[0].astype(np.int64)


def audit(world: World, tables: dict[str, pd.DataFrame], cfg: CxcConfig, **inputs: Any) -> pd.DataFrame:
    """What only the world shows: true positives never rated, CxC positives' precision/recall, Fig. 3 histograms.

    Long form (row, column, value, lo, hi): per split and task the counts of true positives (truth
    function for SITS; noise-free similarity >= threshold for STS/SIS, unordered pairs), the share
    never rated and the precision/recall of the CxC positives (%, Wilson); the rating histograms
    (0.5 bins; All / Intramodal sampling / Same example, as Fig. 3); the co-caption STS and original
    SITS means (bootstrap interval) beside the paper's 3.0 and 4.85.
    """
    margin = _margin_from_inputs(inputs)
    rows: list[dict[str, Any]] = []
    for split in cfg.splits:
        sd = _split_data(world, split, margin)
        for task in TASKS:
            label = f"{split} {TASK_LABELS[task]}"
            frame = tables[task][tables[task]["split"] == split]
            truth = _all_pairs_true_positives(sd, task, cfg)
            keys = _pair_keys(frame, task)
            rated = set(keys)
            cxc_pos = {k for k, p in zip(keys, frame["positive"].to_numpy()) if p}
            n_true, n_rated_true = len(truth), len(truth & rated)
            rows.append(value_row(label, "true positives", n_true))
            rows.append(value_row(label, "rated pairs", len(rated)))
            rows.append(value_row(label, "rated true positives", n_rated_true))
            rows.append(_pct_row(label, "true positives never rated (%)", n_true - n_rated_true, n_true))
            rows.append(value_row(label, "CxC positives", len(cxc_pos)))
            rows.append(_pct_row(label, "CxC positives that are true (%)", len(cxc_pos & truth), len(cxc_pos)))
            rows.append(_pct_row(label, "true positives found by CxC (%)", len(cxc_pos & truth), n_true))
        for task in TASKS:
            frame = tables[task][tables[task]["split"] == split]
            groups = {
                "All": frame["agg_score"].to_numpy(),
                "Intramodal sampling": frame.loc[
                    ~frame["sampling_method"].isin(SAME_EXAMPLE_METHODS), "agg_score"
                ].to_numpy(),
                "Same example": frame.loc[frame["sampling_method"].isin(SAME_EXAMPLE_METHODS), "agg_score"].to_numpy(),
            }
            hists = {g: rating_histogram(v) for g, v in groups.items()}
            for b in range(len(HIST_EDGES) - 1):
                lo, hi = HIST_EDGES[b], HIST_EDGES[b + 1]
                closing = "]" if b == len(HIST_EDGES) - 2 else ")"
                row = f"{split} {TASK_LABELS[task]} rating [{lo:.1f}, {hi:.1f}{closing}"
                for g, h in hists.items():
                    rows.append(value_row(row, g, int(h[b])))
        for row, task, method, paper in (
            (f"{split} co-captions (STS)", "sts", "c2c_cocaption", PAPER_COCAPTION_STS),
            (f"{split} original pairs (SITS)", "sits", "c2i_original", PAPER_ORIGINAL_SITS),
        ):
            frame = tables[task]
            values = frame.loc[(frame["split"] == split) & (frame["sampling_method"] == method), "agg_score"]
            values = values.to_numpy(np.float64)
            lo, hi = bootstrap_interval(values, np.mean, n_boot=1000, seed=cfg.seed)
            mean = float(values.mean()) if len(values) else float("nan")
            rows.append({"row": row, "column": "mean rating", "value": mean, "lo": lo, "hi": hi})
            rows.append(value_row(row, "paper", paper))
    return pd.DataFrame(rows, columns=["row", "column", "value", "lo", "hi"]).astype(
        {"value": "float64", "lo": "float64", "hi": "float64"}
    )
