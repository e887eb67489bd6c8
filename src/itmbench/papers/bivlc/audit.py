"""BiVLC's audit against the world's truth: filter rates beside the paper's, generator mistakes, the final truth."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from itmbench.negatives.captions import SUBSETS
from itmbench.negatives.edits import STREAM_SECOND_ANNOTATOR, _rate_row, _rng, _value_row, select_best
from itmbench.negatives.images import MISTAKES
from itmbench.papers.bivlc.config import BiVLCConfig
from itmbench.world.captions import CaptionStructure
from itmbench.world.generate import World
from itmbench.world.scene import Scene
from itmbench.world.truth import caption_fits

# Cohen's kappa between pairs of step-3 annotators, BiVLC section 3.1 / appendix H.3.
PAPER_STEP3_KAPPA = 0.49


def cohen_kappa(a: np.ndarray, b: np.ndarray) -> float:
    """Cohen's kappa of two binary raters (the paper's step-3 agreement on 'an image' vs 'none')."""
    a, b = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    if a.size == 0:
        return float("nan")
    po = float(np.mean(a == b))
    pe = float(a.mean() * b.mean() + (1 - a.mean()) * (1 - b.mean()))
    return float("nan") if pe == 1.0 else (po - pe) / (1.0 - pe)


def step3_choices(
    sugarcrepe: pd.DataFrame,
    candidate_instance: np.ndarray,
    candidate_fits: np.ndarray,
    cfg: BiVLCConfig,
    stream: int,
    select_noise: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """One simulated step-3 annotator on every SugarCrepe instance: chose an image, and whether it fits.

    `candidate_instance` / `candidate_fits`: each candidate's SugarCrepe id and fit to the negative
    caption; `stream`: the annotator's random stream (STREAM_SELECT is the build's chooser,
    STREAM_SECOND_ANNOTATOR the audit's second); `select_noise`: cfg.select_noise unless given.
    """
    noise = cfg.select_noise if select_noise is None else select_noise
    fits_by_instance = pd.Series(np.asarray(candidate_fits, dtype=bool)).groupby(candidate_instance).apply(np.asarray)
    chose = np.zeros(len(sugarcrepe), dtype=bool)
    chosen_fits = np.zeros(len(sugarcrepe), dtype=bool)
    for k, (sid, image_id, subset, caption_id) in enumerate(
        zip(sugarcrepe["id"], sugarcrepe["image_id"], sugarcrepe["subset"], sugarcrepe["caption_id"])
    ):
        fits = fits_by_instance.get(int(sid), np.zeros(0, bool))
        if len(fits) == 0:
            continue
        best = select_best(fits, noise, _rng(cfg.seed, stream, image_id, SUBSETS.index(subset), caption_id))
        chose[k] = best >= 0
        chosen_fits[k] = best >= 0 and bool(fits[best])
    return chose, chosen_fits


def audit(world: World, tables: Mapping[str, pd.DataFrame], cfg: BiVLCConfig) -> pd.DataFrame:
    """What only the world can check: filter rates vs the paper, generator mistakes, and truth of the final set."""
    margin = cfg.relation_margin
    scenes = {int(i): Scene.from_json(s) for i, s in zip(world.scene_table["image_id"], world.scene_table["scene"])}
    positive = {
        int(c): CaptionStructure.from_json(s)
        for c, s in zip(world.caption_table["caption_id"], world.caption_table["structure"])
    }
    sc, edits, cand, inst = tables["sugarcrepe"], tables["edits"], tables["candidates"], tables["instances"]
    negative = {int(i): CaptionStructure.from_json(s) for i, s in zip(sc["id"], sc["negative_structure"])}
    # Truth recomputed from the scene graphs, not read from the stored flags.
    edit_true = np.array(
        [
            caption_fits(CaptionStructure.from_json(s), scenes[int(i)], margin)
            for s, i in zip(edits["negative_structure"], edits["image_id"])
        ],
        dtype=bool,
    )
    cand_fits_neg = np.array(
        [
            caption_fits(negative[int(i)], Scene.from_json(s), margin)
            for i, s in zip(cand["sugarcrepe_id"], cand["scene"])
        ],
        dtype=bool,
    )
    extra_scene = {
        int(i): Scene.from_json(s) for i, s in zip(tables["extra_images"]["image_id"], tables["extra_images"]["scene"])
    }
    neg_img_fits_pos = np.array(
        [
            caption_fits(positive[int(c)], extra_scene[int(i)], margin)
            for c, i in zip(inst["caption_id"], inst["negative_image"])
        ],
        dtype=bool,
    )
    neg_img_fits_neg = np.array(
        [
            caption_fits(negative[int(s)], extra_scene[int(i)], margin)
            for s, i in zip(inst["sugarcrepe_id"], inst["negative_image"])
        ],
        dtype=bool,
    )
    pos_img_fits_neg = np.array(
        [caption_fits(negative[int(s)], scenes[int(i)], margin) for s, i in zip(inst["sugarcrepe_id"], inst["image"])],
        dtype=bool,
    )
    cand_subset = cand["sugarcrepe_id"].map(dict(zip(sc["id"], sc["subset"]))).to_numpy()
    cand_relation = np.array([negative[int(i)].relation is not None for i in cand["sugarcrepe_id"]], dtype=bool)
    from itmbench.papers.bivlc.statistics import published_survival_rates

    paper = published_survival_rates()

    inst_subset = (inst["type"] + "_" + inst["subtype"]).to_numpy()
    rows: list[dict[str, Any]] = []
    for subset in (*cfg.subsets, "overall"):
        e, s, c, i = (
            np.ones(len(v), dtype=bool) if subset == "overall" else np.asarray(v == subset, dtype=bool)
            for v in (edits["subset"].to_numpy(), sc["subset"].to_numpy(), cand_subset, inst_subset)
        )
        chosen = (sc["chosen_candidate"].to_numpy() >= 0)[s]
        n_sc, n_step3, n_final = int(s.sum()), int(chosen.sum()), int(i.sum())
        rows += [
            _value_row(subset, "edits proposed", e.sum()),
            _rate_row(subset, "edits true of the image (%)", int(edit_true[e].sum()), int(e.sum())),
            _value_row(subset, "SugarCrepe instances", n_sc),
            _rate_row(subset, "step 3 dropped (%)", n_sc - n_step3, n_sc),
            _rate_row(subset, "step 4 dropped (%)", n_step3 - n_final, n_step3),
            _value_row(subset, "BiVLC instances", n_final),
            _rate_row(subset, "removed, steps 3+4 (%)", n_sc - n_final, n_sc),
            _value_row(subset, "paper removed (%)", paper[subset]),
            _rate_row(subset, "candidates fitting the negative caption (%)", int(cand_fits_neg[c].sum()), int(c.sum())),
        ]
        for mistake in MISTAKES:
            applicable = c & cand_relation if mistake == "wrong_relation" else c
            rows.append(
                _rate_row(
                    subset,
                    f"candidates with {mistake} (%)"
                    if mistake != "wrong_relation"
                    else "candidates with wrong_relation (% of relation captions)",
                    int(cand[mistake].to_numpy()[applicable].sum()),
                    int(applicable.sum()),
                )
            )
        rows += [
            _rate_row(
                subset, "final: negative image fits positive caption (%)", int(neg_img_fits_pos[i].sum()), n_final
            ),
            _rate_row(
                subset, "final: negative image fits negative caption (%)", int(neg_img_fits_neg[i].sum()), n_final
            ),
            _rate_row(
                subset, "final: positive image fits negative caption (%)", int(pos_img_fits_neg[i].sum()), n_final
            ),
        ]
    rows += [
        _value_row("overall", "paper step 3 dropped (%)", paper["step3"]),
        _value_row("overall", "paper step 4 dropped (%)", paper["step4"]),
    ]
    # A second, independent step-3 annotator on the same candidates: agreement on 'an image' vs 'none'.
    first_any = sc["chosen_candidate"].to_numpy() >= 0
    second_any, _ = step3_choices(sc, cand["sugarcrepe_id"].to_numpy(), cand_fits_neg, cfg, STREAM_SECOND_ANNOTATOR)
    rows += [
        _value_row("overall", "step 3 Cohen's kappa (simulated)", cohen_kappa(first_any, second_any)),
        _value_row("overall", "paper step 3 Cohen's kappa", PAPER_STEP3_KAPPA),
    ]
    return pd.DataFrame(rows, columns=["row", "column", "value", "lo", "hi"]).astype(
        {"value": "float64", "lo": "float64", "hi": "float64"}
    )
