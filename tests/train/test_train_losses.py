"""The trainers' losses against naive loops, on fixed embeddings."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from itmbench.params import make_config
from itmbench.train.config import TrainConfig
from itmbench.train.loop import Embedded
from itmbench.train.losses import (
    clip_loss,
    in_batch_softmax_loss,
    multitask_loss,
    negclip_loss,
    vse_hinge_loss,
)
from itmbench.train.recipes import RECIPES


def unit(rows: int, dim: int = 8, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return F.normalize(torch.randn(rows, dim, generator=g, dtype=torch.float64), dim=1)


def naive_vse_hinge(img: torch.Tensor, txt: torch.Tensor, margin: float, hardest: bool = True) -> float:
    """VSE++ max-violation loss (VSE0's sum of hinges when not `hardest`), one pair at a time (batch mean)."""
    n = len(img)
    s = [[float(img[i] @ txt[j]) for j in range(n)] for i in range(n)]
    pool = max if hardest else sum
    total = 0.0
    for i in range(n):
        caption_costs = [max(0.0, margin - s[i][i] + s[i][j]) for j in range(n) if j != i]
        image_costs = [max(0.0, margin - s[i][i] + s[j][i]) for j in range(n) if j != i]
        total += pool(caption_costs) + pool(image_costs)
    return total / n


def naive_softmax(left: torch.Tensor, right: torch.Tensor, scale: float) -> float:
    """CxC eq. (1) with the positive in the denominator, as a double loop."""
    n = len(left)
    total = 0.0
    for a, b in ((left, right), (right, left)):
        for i in range(n):
            scores = [scale * float(a[i] @ b[j]) for j in range(n)]
            total -= scores[i] - math.log(sum(math.exp(x) for x in scores))
    return total / n


@pytest.mark.parametrize("margin", [0.0, 0.2, 0.5])
def test_vse_hinge_loss_equals_the_naive_max_violation(margin):
    img, txt = unit(7, seed=1), unit(7, seed=2)
    assert float(vse_hinge_loss(img, txt, margin)) == pytest.approx(naive_vse_hinge(img, txt, margin), abs=1e-12)
    vse0 = float(vse_hinge_loss(img, txt, margin, hardest=False))
    assert vse0 == pytest.approx(naive_vse_hinge(img, txt, margin, hardest=False), abs=1e-12)
    assert vse0 >= float(vse_hinge_loss(img, txt, margin))


def test_vse_trainer_warms_up_with_the_sum_of_hinges_then_takes_the_hardest():
    img, txt = unit(6, seed=17), unit(6, seed=18)
    emb = Embedded(n_positive=6, txt=txt, img=img)
    cfg = make_config(TrainConfig, hinge_margin=0.3, hinge_warmup_epochs=2)
    scale = torch.tensor(0.0, dtype=torch.float64)
    warm = [float(RECIPES["vse_hinge"].loss(emb, scale, cfg, epoch)) for epoch in range(4)]
    assert warm[0] == warm[1] == pytest.approx(naive_vse_hinge(img, txt, 0.3, hardest=False))
    assert warm[2] == warm[3] == pytest.approx(naive_vse_hinge(img, txt, 0.3))
    assert warm[0] > warm[2]


def test_vse_hinge_loss_is_zero_when_every_positive_wins_by_the_margin():
    eye = torch.eye(4, dtype=torch.float64)  # positives 1, every negative 0
    assert float(vse_hinge_loss(eye, eye, 0.2)) == 0.0
    assert float(vse_hinge_loss(eye, eye, 1.5)) == pytest.approx(2 * 0.5)  # each side violates by 0.5


def test_in_batch_softmax_loss_equals_cxc_equation_one():
    left, right = unit(6, seed=3), unit(6, seed=4)
    scale = torch.tensor(math.log(10.0), dtype=torch.float64)
    assert float(in_batch_softmax_loss(left, right, scale)) == pytest.approx(naive_softmax(left, right, 10.0))
    assert float(in_batch_softmax_loss(left, right, scale)) == pytest.approx(2 * float(clip_loss(left, right, scale)))


def test_the_temperature_is_clamped_at_100():
    left, right = unit(5, seed=5), unit(5, seed=6)
    big = torch.tensor(10.0, dtype=torch.float64)  # exp(10) >> 100
    assert float(in_batch_softmax_loss(left, right, big)) == pytest.approx(naive_softmax(left, right, 100.0))


def test_multitask_loss_is_l_i2t_plus_c_times_l_t2t_on_a_fixed_batch():
    img, txt, partner = unit(5, seed=7), unit(5, seed=8), unit(5, seed=9)
    scale = torch.tensor(math.log(1 / 0.07), dtype=torch.float64)
    emb = Embedded(n_positive=5, txt=txt, img=img, partner=partner)
    for c in (0.0, 0.3, 1.0, 2.5):
        cfg = make_config(TrainConfig, t2t_weight=c)
        i2t = float(RECIPES["de_i2t"].loss(emb, scale, cfg, 0))
        t2t = float(RECIPES["de_t2t"].loss(emb, scale, cfg, 0))
        both = float(RECIPES["de_t2t_i2t"].loss(emb, scale, cfg, 0))
        assert both == pytest.approx(i2t + c * t2t, abs=1e-12)
        assert both == pytest.approx(float(multitask_loss(img, txt, partner, scale, c)), abs=1e-12)
    assert t2t == pytest.approx(naive_softmax(txt, partner, 1 / 0.07))
    assert i2t == pytest.approx(naive_softmax(img, txt, 1 / 0.07))
    assert t2t != pytest.approx(i2t)  # the two tasks read different pairs


def test_negclip_loss_adds_negative_captions_to_image_to_text_only():
    img, txt, neg = unit(4, seed=10), unit(4, seed=11), unit(3, seed=12)
    scale = torch.tensor(math.log(20.0), dtype=torch.float64)
    # No extra captions: it is CLIP's loss.
    assert float(negclip_loss(img, txt, scale)) == pytest.approx(float(clip_loss(img, txt, scale)))
    got = float(negclip_loss(img, torch.cat([txt, neg]), scale))
    everything = torch.cat([txt, neg])
    i2t = np.mean(
        [
            -(20 * float(img[i] @ txt[i]) - math.log(sum(math.exp(20 * float(img[i] @ t)) for t in everything)))
            for i in range(4)
        ]
    )
    t2i = np.mean(
        [
            -(20 * float(txt[j] @ img[j]) - math.log(sum(math.exp(20 * float(txt[j] @ v)) for v in img)))
            for j in range(4)
        ]
    )
    assert got == pytest.approx(0.5 * (i2t + t2i))
    # A negative caption that scores higher than the positive raises the loss; its own row is not a query.
    hard = torch.cat([txt, img[:1]])  # a caption identical to image 0
    assert float(negclip_loss(img, hard, scale)) > float(negclip_loss(img, txt, scale))
    with pytest.raises(ValueError, match="2 captions for 4 images"):
        negclip_loss(img, txt[:2], scale)


def test_trohn_img_pairs_are_negatives_on_both_sides():
    """TROHN-Img's loss is CLIP's over positives + negative pairs: each negative pair is a negative for the others."""
    pos_img, pos_txt = unit(3, seed=13), unit(3, seed=14)
    neg_img, neg_txt = unit(3, seed=15), unit(3, seed=16)
    scale = torch.tensor(math.log(10.0), dtype=torch.float64)
    emb = Embedded(n_positive=3, txt=torch.cat([pos_txt, neg_txt]), img=torch.cat([pos_img, neg_img]))
    got = float(RECIPES["trohn_img"].loss(emb, scale, make_config(TrainConfig), 0))
    assert got == pytest.approx(0.5 * naive_softmax(emb.img, emb.txt, 10.0))
    assert got != pytest.approx(float(clip_loss(pos_img, pos_txt, scale)))


def test_negclip_loss_on_a_negclip_aro_batch_is_the_authors_clip_loss():
    """The authors' open_clip fork (vinid/neg_clip, src/open_clip/loss.py ClipLoss on one GPU): 2B images (the
    batch's and its nearest images) against 4B texts (their captions, then the swaps), labels 0..2B-1, and the
    text side's first 2B rows only: (CE(logits_per_image) + CE(logits_per_text[:2B])) / 2."""
    b = 3
    img, txt = unit(2 * b, seed=20), unit(4 * b, seed=21)
    scale = torch.tensor(math.log(30.0), dtype=torch.float64)
    logits_per_image = 30.0 * img @ txt.T
    logits_per_text = 30.0 * txt @ img.T
    labels = torch.arange(2 * b)
    authors = (
        torch.nn.functional.cross_entropy(logits_per_image, labels)
        + torch.nn.functional.cross_entropy(logits_per_text[: len(logits_per_image)], labels)
    ) / 2
    assert float(negclip_loss(img, txt, scale)) == pytest.approx(float(authors))
