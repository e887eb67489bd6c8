"""MCIC's audit against the world's truth: fitting decoys, simulated raters, the answer-position prior.

Audit (world only): decoys that fit the image by the world's truth (share of decoys, share of
instances with at least one), the truth oracle (uniform among fitting options), simulated raters
(each answers uniformly among the options that fit the image by truth, or with probability
`rater_noise` uniformly among all 5; `n_raters` [3] per instance, majority = at least half correct,
the paper's "at least 2 of 3") beside the paper's Table 2 (81.1 / 67.3 / 82.8 / 93.1), and the
answer-position prior (accuracy of always answering each position; 22.7% for position 3 on dev).
`relation_margin` and `max_objects` must equal the world's (they define truth).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from itmbench.metrics.intervals import DEFAULT_CONFIDENCE, bootstrap_interval, wilson_interval
from itmbench.papers.mcic.config import N_OPTIONS, MCICConfig
from itmbench.world.captions import CaptionStructure
from itmbench.world.generate import World
from itmbench.world.scene import Scene
from itmbench.world.truth import truth_matrix

# The paper's published reference values (Table 2 and the released dev file's answer prior), in %.
PAPER_HUMAN = {"one_rater": 81.1, "all_correct": 67.3, "majority": 82.8, "at_least_one": 93.1}
PAPER_PRIOR_POSITION_3 = 22.7


def option_fits(world: World, examples: pd.DataFrame, cfg: MCICConfig) -> np.ndarray:
    """bool [n, 5]: whether each option fits the instance's image by the world's truth."""
    n = len(examples)
    if n == 0:
        return np.zeros((0, N_OPTIONS), dtype=bool)
    option_ids = np.array([list(v) for v in examples["option_caption_ids"]], dtype=np.int64)
    uniq_caps, cap_inv = np.unique(option_ids, return_inverse=True)
    uniq_imgs, img_inv = np.unique(examples["image_id"].to_numpy(dtype=np.int64), return_inverse=True)
    structure_of = dict(zip(world.caption_table["caption_id"].to_numpy(), world.caption_table["structure"]))
    scene_of = dict(zip(world.scene_table["image_id"].to_numpy(), world.scene_table["scene"]))
    missing = [int(c) for c in uniq_caps if int(c) not in structure_of]
    if missing:
        raise KeyError(f"mcic audit: caption ids {missing[:5]} are not in the world (a table from another world?)")
    structures = [CaptionStructure.from_json(structure_of[int(c)]) for c in uniq_caps]
    scenes = [Scene.from_json(scene_of[int(i)]) for i in uniq_imgs]
    fits = truth_matrix(structures, scenes, cfg.relation_margin, cfg.max_objects)  # [caps, imgs]
    return fits[cap_inv.reshape(n, N_OPTIONS), img_inv[:, None]]


def simulate_raters(fits: np.ndarray, answer: np.ndarray, cfg: MCICConfig, stream: int) -> np.ndarray:
    """int [n, n_raters] chosen options: uniform among fitting options, or any option with prob. noise."""
    n = fits.shape[0]
    rng = np.random.default_rng([cfg.rater_seed, stream])
    lapse = rng.random((n, cfg.n_raters)) < cfg.rater_noise
    any_pick = rng.integers(0, N_OPTIONS, size=(n, cfg.n_raters))
    u = rng.random((n, cfg.n_raters))
    fit = fits.copy()
    fit[fit.sum(axis=1) == 0] = True  # nothing fits: guess among all
    n_fit = fit.sum(axis=1)
    kth = np.minimum((u * n_fit[:, None]).astype(np.int64), n_fit[:, None] - 1)  # which fitting option
    cum = np.cumsum(fit, axis=1)  # [n, 5]
    truth_pick = (cum[:, None, :] <= kth[:, :, None]).sum(axis=2)  # first j with cum[j] > kth
    return np.where(lapse, any_pick, truth_pick)


def _pct(successes: int, n: int, confidence: float = DEFAULT_CONFIDENCE) -> tuple[float, float, float]:
    lo, hi = wilson_interval(successes, n, confidence)
    value = 100.0 * successes / n if n else float("nan")
    return value, 100.0 * lo, 100.0 * hi


def audit(world: World, tables: dict[str, pd.DataFrame], cfg: MCICConfig) -> pd.DataFrame:
    """Long table (row, column, value, lo, hi): fitting decoys, simulated raters, answer-position prior."""
    examples = tables["examples"]
    nan = float("nan")
    rows: list[dict[str, Any]] = []

    def add(row: str, column: str, value: float, lo: float = nan, hi: float = nan) -> None:
        rows.append({"row": row, "column": column, "value": float(value), "lo": float(lo), "hi": float(hi)})

    for stream, split in enumerate(dict.fromkeys(examples["split"])):
        ex = examples[examples["split"] == split]
        n = len(ex)
        answer = ex["answer_index"].to_numpy(dtype=np.int64)
        fits = option_fits(world, ex, cfg)
        is_decoy = np.ones_like(fits)
        is_decoy[np.arange(n), answer] = False
        fitting_decoys = fits & is_decoy
        add("instances", split, n)
        add("decoys", split, int(is_decoy.sum()))
        add("decoys fitting the image (% of decoys)", split, *_pct(int(fitting_decoys.sum()), int(is_decoy.sum())))
        add("instances with a fitting decoy (%)", split, *_pct(int(fitting_decoys.any(axis=1).sum()), n))
        add("true caption fits the image (%)", split, *_pct(int(fits[np.arange(n), answer].sum()), n))
        n_fit = np.maximum(fits.sum(axis=1), 1)
        oracle = np.where(fits[np.arange(n), answer], 1.0 / n_fit, 0.0)
        lo, hi = bootstrap_interval(oracle, np.mean, seed=cfg.rater_seed) if n else (nan, nan)
        add(
            "truth oracle, uniform among fitting options (%)",
            split,
            100 * oracle.mean() if n else nan,
            100 * lo,
            100 * hi,
        )
        picks = simulate_raters(fits, answer, cfg, stream)
        correct = picks == answer[:, None]
        n_correct = correct.sum(axis=1)
        half = int(np.ceil(cfg.n_raters / 2))
        add("raters: 1-rater accuracy (%)", split, *_pct(int(correct.sum()), int(correct.size)))
        add(
            f"raters: {cfg.n_raters} of {cfg.n_raters} correct (%)",
            split,
            *_pct(int((n_correct == cfg.n_raters).sum()), n),
        )
        add(
            f"raters: majority, at least {half} of {cfg.n_raters} correct (%)",
            split,
            *_pct(int((n_correct >= half).sum()), n),
        )
        add(f"raters: at least 1 of {cfg.n_raters} correct (%)", split, *_pct(int((n_correct >= 1).sum()), n))
        for j in range(N_OPTIONS):
            add(f"always answer position {j} (%)", split, *_pct(int((answer == j).sum()), n))
    half = int(np.ceil(cfg.n_raters / 2))
    if cfg.n_raters == 3:
        add("raters: 1-rater accuracy (%)", "paper", PAPER_HUMAN["one_rater"])
        add("raters: 3 of 3 correct (%)", "paper", PAPER_HUMAN["all_correct"])
        add(f"raters: majority, at least {half} of 3 correct (%)", "paper", PAPER_HUMAN["majority"])
        add("raters: at least 1 of 3 correct (%)", "paper", PAPER_HUMAN["at_least_one"])
    add("always answer position 3 (%)", "paper", PAPER_PRIOR_POSITION_3)
    return pd.DataFrame(rows, columns=["row", "column", "value", "lo", "hi"])
