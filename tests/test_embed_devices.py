"""Embeddings and per-instance scores do not depend on the batch size or on the number of devices.

Several devices are simulated on the CPU the way `itmbench embed --devices N` splits work across
GPUs: the item batches are cut into N contiguous shards, each embedded by its own worker process
with its own replica of the model, and the shards are concatenated in item order.
"""

from __future__ import annotations

import numpy as np
import open_clip
import pandas as pd
import pytest
import torch
from unit_world import unit_world

from itmbench.cli import main
from itmbench.models.openclip import register_local_configs
from itmbench.models.registry import build_encoder
from itmbench.models.spec import model_spec
from itmbench.papers.bivlc import build as bivlc_build
from itmbench.papers.bivlc import canonical as bivlc_canonical
from itmbench.papers.bivlc import score as bivlc_score
from itmbench.papers.bivlc.config import BiVLCConfig
from itmbench.params import make_config
from itmbench.scoring.embed import (
    EmbeddingCache,
    ItemStore,
    embed_items,
    embed_items_on_devices,
    shard_ranges,
    visible_devices,
    write_embeddings,
)
from itmbench.world.generate import generate_world, write_world

SPEC = {"family": "open_clip", "arch": "itm-clip-tiny"}


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """A tiny world with its BiVLC, and a random-weight model saved as a checkpoint."""
    root = tmp_path_factory.mktemp("dev")
    world = generate_world(unit_world(n_train=8, n_val=4, n_test=40))
    write_world(world, root / "items")
    bivlc_canonical.write(bivlc_build.build(world, make_config(BiVLCConfig)), root / "bivlc")
    register_local_configs()
    torch.manual_seed(3)
    model = open_clip.create_model("itm-clip-tiny")
    torch.save({"state_dict": model.state_dict()}, root / "model.pt")
    return root


def _items(root) -> pd.DataFrame:
    return pd.read_parquet(root / "bivlc" / "items.parquet")


def test_shards_are_contiguous_cover_every_item_once_and_cut_at_batch_boundaries():
    for n, batch, shards in [(0, 4, 3), (1, 4, 3), (10, 4, 3), (100, 7, 4), (9, 3, 5), (256, 256, 2)]:
        ranges = shard_ranges(n, batch, shards)
        assert len(ranges) == shards
        assert ranges[0][0] == 0 and ranges[-1][1] == n
        assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))  # contiguous, in order
        assert all(a % batch == 0 for a, _ in ranges)  # every shard starts a batch
        sizes = [b - a for a, b in ranges]
        assert max(sizes) - min(sizes) <= batch  # balanced to a batch


def test_visible_devices_falls_back_to_cpu_shards():
    if torch.cuda.device_count() == 0:
        assert visible_devices(3) == ["cpu"] * 3
        assert visible_devices("all") == ["cpu"]
    with pytest.raises(ValueError, match="--devices 0: expected a positive number"):
        visible_devices(0)


@pytest.fixture(scope="module")
def sharded(setup):
    """BiVLC's items embedded in batches of 7 by 3 CPU workers (simulated devices), once for the module."""
    root = setup
    return embed_items_on_devices(
        SPEC, "m", root / "model.pt", root / "items", [root / "bivlc" / "extra_items"], _items(root),
        ["cpu"] * 3, batch_size=7, threads=3,
    )  # fmt: skip


def test_three_cpu_shards_give_the_same_embeddings_as_one_device(setup, sharded):
    """The library path: identical bits (same batches, one thread per worker and in the single run)."""
    root = setup
    torch.set_num_threads(1)
    enc = build_encoder(model_spec("m", SPEC), torch.device("cpu"), root / "model.pt")
    one = embed_items(enc, ItemStore(root / "items", [root / "bivlc" / "extra_items"]), _items(root), batch_size=7)
    assert len(one["image_ids"]) > 3 * 7  # every shard has work
    for key in one:
        assert np.array_equal(one[key], sharded[key]), key


@pytest.mark.slow
def test_embed_command_with_devices_writes_the_same_cache(setup, tmp_path):
    """`itmbench embed --devices 2` (CPU shards here) and `--devices 1` write the same cache file contents."""
    root = setup
    args = [
        "embed", "--model", "m", "--spec", '{"family": "open_clip", "arch": "itm-clip-tiny"}',
        "--checkpoint", str(root / "model.pt"), "--items", str(root / "bivlc" / "extra_items"),
        "--batch-size", "8", "--threads", "2",
    ]  # fmt: skip
    assert main([*args, "--out", str(tmp_path / "one.npz"), "--devices", "1"]) == 0
    assert main([*args, "--out", str(tmp_path / "two.npz"), "--devices", "2"]) == 0
    a, b = np.load(tmp_path / "one.npz"), np.load(tmp_path / "two.npz")
    assert sorted(a.files) == sorted(b.files) and len(a["image_ids"]) > 8
    for key in a.files:
        assert np.allclose(a[key], b[key], rtol=0, atol=1e-6), key  # 2 threads vs 1 per worker: float order only


def test_bivlc_per_instance_scores_do_not_depend_on_batch_size_or_devices(setup, sharded, tmp_path):
    root = setup
    torch.set_num_threads(1)
    enc = build_encoder(model_spec("m", SPEC), torch.device("cpu"), root / "model.pt")
    store = ItemStore(root / "items", [root / "bivlc" / "extra_items"])
    tables = bivlc_canonical.read(root / "bivlc")
    runs = {f"batch {b}": embed_items(enc, store, _items(root), batch_size=b) for b in (1, 7, 256)}
    runs["3 devices"] = sharded
    scores = {}
    for name, emb in runs.items():
        write_embeddings(tmp_path / f"{name}.npz", emb)
        scores[name] = bivlc_score.score_dual(tables, EmbeddingCache(tmp_path / f"{name}.npz"))
    cols = ["s_c0_i0", "s_c1_i0", "s_c0_i1", "s_c1_i1"]
    ref = scores["batch 7"]
    assert ref["in_bivlc"].sum() > 5
    assert np.array_equal(ref[cols].to_numpy(), scores["3 devices"][cols].to_numpy(), equal_nan=True)
    for name, s in scores.items():
        assert np.allclose(ref[cols].to_numpy(), s[cols].to_numpy(), rtol=0, atol=1e-5, equal_nan=True), name
        # the per-instance outcomes agree wherever the two scores compared are not a float-level tie
        for a, b in (("s_c0_i0", "s_c1_i0"), ("s_c1_i1", "s_c0_i1"), ("s_c0_i0", "s_c0_i1"), ("s_c1_i1", "s_c1_i0")):
            margin = (ref[a] - ref[b]).abs().to_numpy()
            clear = margin > 1e-5
            assert np.array_equal((ref[a] > ref[b]).to_numpy()[clear], (s[a] > s[b]).to_numpy()[clear]), (name, a, b)
