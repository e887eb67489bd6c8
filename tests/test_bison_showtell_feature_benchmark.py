"""benchmarks/bison_showtell_feature.py's second image feature: the tower's own pooled feature, one region."""

from __future__ import annotations

import numpy as np
import torch
from benchmark_scripts import load_benchmark

from itmbench.models.registry import build_encoder
from itmbench.models.spec import model_spec
from itmbench.papers.bison import feature_captioners as fc


@torch.no_grad()
def test_the_pooled_feature_is_the_towers_image_feature_as_one_region_and_the_mean_is_the_grids():
    bench = load_benchmark("bison_showtell_feature")
    images = np.random.default_rng(0).integers(0, 256, size=(3, 64, 64, 3), dtype=np.uint8)
    for arch in ("itm-clip-tiny", "itm-clip-tiny-rn"):
        torch.manual_seed(0)
        enc = build_encoder(model_spec("t", {"family": "open_clip", "arch": arch}), torch.device("cpu"), None)
        pooled = bench.pooled_features(enc, images, batch_size=2)
        assert pooled.shape == (3, 1, 64)
        assert not enc.model.training  # batch norms on their running statistics: batches of two and one
        torch.testing.assert_close(pooled[:, 0], enc.model.visual(enc.image_tensor(images)))
        assert fc.grid_features(enc, images).shape[1] > 1  # the recipe's feature: a grid ShowTell averages
