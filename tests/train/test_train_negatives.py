"""The trainers' batches: hard negatives false of their images (by the world's truth), co-captions, determinism."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from unit_world import unit_world

from itmbench.params import make_config
from itmbench.train.config import TrainConfig
from itmbench.train.loop import TrainData
from itmbench.train.recipes import RECIPES, co_caption_lists
from itmbench.world.captions import CaptionStructure
from itmbench.world.generate import generate_world
from itmbench.world.scene import Scene
from itmbench.world.truth import caption_fits

WIDTH = 96
MARGIN = unit_world().relation_margin


def char_tokens(texts: list[str]) -> torch.Tensor:
    """A decodable stand-in tokenizer: one character code per position."""
    out = torch.zeros((len(texts), WIDTH), dtype=torch.long)
    for i, t in enumerate(texts):
        out[i, : len(t)] = torch.tensor([ord(c) for c in t])
    return out


def decode(tokens: torch.Tensor) -> list[str]:
    return ["".join(chr(int(c)) for c in row if int(c)) for row in tokens]


@pytest.fixture(scope="module")
def data() -> TrainData:
    world = generate_world(unit_world(n_train=60, n_val=4, n_test=4))
    return TrainData.from_world(world, char_tokens, "tiny world")


def scene_of(data: TrainData, row: int) -> Scene:
    return data.scenes[int(data.image_ids[row])]


def test_negclip_batches_hold_the_positives_then_edits_false_of_their_images(data):
    cfg = make_config(TrainConfig, hard_negatives_per_sample=2, relation_margin=MARGIN)
    source = RECIPES["negclip"].build(data, cfg)
    neg = source.negatives
    assert source.n_samples == len(data) == 300
    assert len(neg) > 0.9 * 2 * len(data)  # nearly every caption gets 2 (one per subset, up to 7 subsets)
    assert set(neg["subset"]) == set(cfg.negative_subsets)
    counts = neg.groupby("positive_row").size()
    assert counts.max() == 2 and neg.groupby("positive_row")["subset"].nunique().eq(counts).all()
    for row in neg.itertuples():
        structure = CaptionStructure.from_json(row.structure)
        assert not caption_fits(structure, scene_of(data, row.positive_row), MARGIN), row
        assert row.text != data.texts[row.positive_row]
        assert row.caption_id == data.caption_ids[row.positive_row]
    idx = np.array([5, 0, 17, 42])
    batch = source.batch(idx, np.random.default_rng(0))
    texts = decode(batch.texts)
    assert batch.n_positive == 4 and batch.images.shape == (4, 64, 64, 3)
    assert texts[:4] == [data.texts[i] for i in idx]
    assert np.array_equal(batch.images, data.images[data.image_row[idx]])
    extras = neg.loc[batch.negative_rows]
    assert texts[4:] == extras["text"].tolist()
    assert extras["positive_row"].tolist() == sorted(extras["positive_row"].tolist(), key=list(idx).index)
    for text, row in zip(texts[4:], extras["positive_row"]):  # each extra caption is false of its positive's image
        structure = CaptionStructure.from_json(neg.loc[neg["text"].eq(text) & neg["positive_row"].eq(row)].iloc[0, 5])
        assert not caption_fits(structure, scene_of(data, row), MARGIN)


def test_trohn_img_pairs_fit_their_caption_and_not_the_positive(data):
    cfg = make_config(TrainConfig, trohn_img_fraction=0.3, filter_negative_images=True)  # the filtered ablation
    source = RECIPES["trohn_img"].build(data, cfg)
    pairs = source.pairs
    assert source.n_samples == round(0.3 * len(data)) == len(source.instances)
    assert len(pairs) == len(source.pair_images) == len(source.pair_tokens)
    assert "add_obj" not in set(pairs["subset"])  # adding an object keeps the positive true: always filtered out
    for k, row in enumerate(pairs.itertuples()):
        negative = CaptionStructure.from_json(row.structure)
        positive = data.structures[row.positive_row]
        scene = Scene.from_json(row.scene)
        assert not caption_fits(negative, scene_of(data, row.positive_row), MARGIN)  # caption- false of image+
        assert caption_fits(negative, scene, MARGIN)  # caption- true of image-
        assert not caption_fits(positive, scene, MARGIN)  # caption+ false of image-
        assert source.pair_images[k].shape == (64, 64, 3) and source.pair_images[k].std() > 0
    idx = np.array([3, 1, 8])
    batch = source.batch(idx, np.random.default_rng(0))
    rows = source.instances[idx]
    texts = decode(batch.texts)
    n = len(batch.negative_rows)
    assert batch.n_positive == 3 and n >= 3 and len(texts) == len(batch.images) == 3 + n
    assert texts[:3] == [data.texts[r] for r in rows]
    assert texts[3:] == pairs.loc[batch.negative_rows, "text"].tolist()
    assert np.array_equal(batch.images[:3], data.images[data.image_row[rows]])
    assert np.array_equal(batch.images[3:], source.pair_images[batch.negative_rows])
    assert set(pairs.loc[batch.negative_rows, "positive_row"]) == set(rows)


def test_unfiltered_negative_images_keep_the_generators_mistakes(data):
    """With every bound object left out, the filter drops most images; without it they come through, wrong."""
    broken = {"p_missing_object": 1.0, "p_extra_object": 0.0, "p_wrong_binding": 0.0, "p_wrong_relation": 0.0}
    filtered = RECIPES["trohn_img"].build(
        data, make_config(TrainConfig, trohn_img_fraction=0.2, generator=broken, filter_negative_images=True)
    )
    assert filtered.n_samples < 12 and all(
        caption_fits(CaptionStructure.from_json(s), Scene.from_json(sc), MARGIN)
        for s, sc in zip(filtered.pairs["structure"], filtered.pairs["scene"])
    )
    raw = RECIPES["trohn_img"].build(data, make_config(TrainConfig, trohn_img_fraction=0.2, generator=broken))
    assert make_config(TrainConfig).filter_negative_images is False  # the default is BiVLC's unfiltered TROHN-Img
    fits = [
        caption_fits(CaptionStructure.from_json(s), Scene.from_json(sc), MARGIN)
        for s, sc in zip(raw.pairs["structure"], raw.pairs["scene"])
    ]
    assert raw.n_samples == 60 and np.mean(fits) < 0.5
    assert set(raw.stats()["mistakes"]) == {"missing_object"}


def test_hard_negatives_are_deterministic_by_seed(data):
    a = RECIPES["trohn_img"].build(data, make_config(TrainConfig, trohn_img_fraction=0.2))
    b = RECIPES["trohn_img"].build(data, make_config(TrainConfig, trohn_img_fraction=0.2))
    c = RECIPES["trohn_img"].build(data, make_config(TrainConfig, trohn_img_fraction=0.2, seed=1))
    assert a.pairs.equals(b.pairs) and np.array_equal(a.pair_images, b.pair_images)
    assert not a.pairs["text"].equals(c.pairs["text"]) if len(a.pairs) == len(c.pairs) else True
    assert set(a.pairs["positive_row"]) != set(c.pairs["positive_row"])
    # A caption's negatives depend on (seed, caption id) only: TROHN-Text and TROHN-Img share them.
    text = RECIPES["negclip"].build(data, make_config(TrainConfig)).negatives.set_index("positive_row")["text"]
    assert (a.pairs.set_index("positive_row")["text"] == text.loc[a.pairs["positive_row"]]).all()


def test_co_captions_are_other_captions_of_the_same_image(data):
    source = RECIPES["de_t2t"].build(data, make_config(TrainConfig))
    idx = np.random.default_rng(3).permutation(len(data))[:64]
    batch = source.batch(idx, np.random.default_rng(4))
    partners = batch.negative_rows
    assert batch.images is None and decode(batch.partners) == [data.texts[p] for p in partners]
    assert np.array_equal(data.image_ids[partners], data.image_ids[idx]) and not np.any(partners == idx)
    both = RECIPES["de_t2t_i2t"].build(data, make_config(TrainConfig)).batch(idx, np.random.default_rng(4))
    assert np.array_equal(both.negative_rows, partners) and both.images.shape == (64, 64, 64, 3)
    many = source.partner_rows(np.zeros(200, dtype=np.int64), np.random.default_rng(5))
    assert set(many) == {1, 2, 3, 4}  # all four co-captions of caption 0 are drawn
    with pytest.raises(ValueError, match=r"train images \[7\] have a single caption"):
        co_caption_lists(np.array([3, 3, 7]), "train split")


def test_train_config_names_bad_values():
    with pytest.raises(ValueError, match="negative_subsets.*swap_everything"):
        make_config(TrainConfig, negative_subsets=("replace_obj", "swap_everything"))
    with pytest.raises(
        ValueError, match="hard_negatives_per_sample=3 > 2 entries of negative_subsets; expected at most 2"
    ):
        make_config(TrainConfig, hard_negatives_per_sample=3, negative_subsets=["replace_obj", "add_att"])
    with pytest.raises(ValueError, match="trohn_img_fraction: 0 is less than or equal to the minimum of 0"):
        make_config(TrainConfig, trohn_img_fraction=0)
    with pytest.raises(ValueError, match="unknown keys \\['margin'\\]"):
        make_config(TrainConfig, {"margin": 0.2})
    assert make_config(TrainConfig, {"negative_subsets": ["add_att"]}).negative_subsets == ("add_att",)


def test_negclip_swaps_of_a_caption_are_the_worked_example():
    from itmbench.train.negatives import swap_negatives

    assert swap_negatives("a red circle is above a blue square") == [
        "a blue square is above a red circle",  # the two noun phrases
        "a red square is above a blue circle",  # the two nouns
        "a blue circle is above a red square",  # the two adjectives
    ]
    assert swap_negatives("two small green triangles") == ["two green small triangles"]
    assert swap_negatives("a red circle") == [] and swap_negatives("a circle and a circle") == []


def test_negclip_swap_kinds_name_the_first_swap_that_makes_each_text():
    from itmbench.train.negatives import swap_kinds

    # One-word noun phrases: the noun-phrase swap and the noun swap make one text, counted once, as noun phrases.
    assert swap_kinds("a circle is above a square") == {"a square is above a circle": "noun phrases"}
    assert swap_kinds("a red circle is above a blue square") == {
        "a blue square is above a red circle": "noun phrases",
        "a red square is above a blue circle": "nouns",
        "a blue circle is above a red square": "adjectives",
    }
    assert swap_kinds("two small green triangles") == {"two green small triangles": "adjectives"}


def _naive_swaps(text: str) -> set[str]:
    """Every swap of two word spans of one kind: two single words of the same part of speech (noun, adjective),
    or two noun phrases (determiner, adjectives, noun), found by trying every pair of spans."""
    from itmbench.world.captions import word_tag

    words = text.split()
    n = len(words)

    def is_np(a: int, b: int) -> bool:
        tags = [word_tag(w) for w in words[a:b]]
        return len(tags) >= 2 and tags[0] == "det" and tags[-1] == "noun" and all(t == "adj" for t in tags[1:-1])

    out = set()
    spans = [(a, b) for a in range(n) for b in range(a + 1, n + 1) if is_np(a, b)]
    for a0, a1 in spans:
        for b0, b1 in spans:
            if a1 <= b0:
                out.add(" ".join(words[:a0] + words[b0:b1] + words[a1:b0] + words[a0:a1] + words[b1:]))
    for a in range(n):
        for b in range(a + 1, n):
            if word_tag(words[a]) == word_tag(words[b]) in ("noun", "adj"):
                swapped = list(words)
                swapped[a], swapped[b] = words[b], words[a]
                out.add(" ".join(swapped))
    out.discard(text)
    return out


def test_negclip_swaps_equal_a_naive_enumeration_on_every_world_caption(data):
    from itmbench.train.negatives import swap_negatives

    made = [swap_negatives(t) for t in data.texts]
    assert [set(s) for s in made] == [_naive_swaps(t) for t in data.texts]
    assert all(len(s) == len(set(s)) for s in made)  # distinct
    assert sum(bool(s) for s in made) > 0.5 * len(made)  # most world captions have one


def test_nearest_images_equal_a_naive_ranking():
    from itmbench.train.negatives import nearest_images

    rng = np.random.default_rng(3)
    feats = rng.normal(size=(23, 5)).astype(np.float32)
    feats[7] = feats[2]  # a tie: the lower row first
    feats /= np.linalg.norm(feats, axis=1, keepdims=True)
    got = nearest_images(lambda imgs: feats[imgs[:, 0, 0, 0]], np.arange(23).reshape(23, 1, 1, 1), 4, chunk=5)
    for i in range(23):
        sims = [(-(float(feats[i] @ feats[j])), j) for j in range(23) if j != i]
        assert got[i].tolist() == [j for _, j in sorted(sims)[:4]], i
    with pytest.raises(ValueError, match="23 neighbours of each of 23 images"):
        nearest_images(lambda x: x, np.zeros((23, 1, 1, 1)), 23)


def test_negclip_aro_batches_pair_each_caption_with_a_nearest_image_and_swaps_of_both(data):
    from dataclasses import replace

    from itmbench.train.negatives import swap_negatives

    def colour_features(images: np.ndarray) -> np.ndarray:  # a stand-in encoder: the mean colour
        f = images.reshape(len(images), -1, 3).mean(axis=1) + 1.0
        return f / np.linalg.norm(f, axis=1, keepdims=True)

    cfg = make_config(TrainConfig, negclip_neighbours=3)
    source = RECIPES["negclip_aro"].build(replace(data, encode_images=colour_features), cfg)
    swappable = [row for row, t in enumerate(data.texts) if swap_negatives(t)]
    assert source.samples.tolist() == swappable and source.n_samples == len(swappable)
    image_rows = np.unique(data.image_row[swappable])
    feats = colour_features(data.images[image_rows])
    idx = np.array([4, 0, 9])
    batch = source.batch(idx, np.random.default_rng(0))
    texts = decode(batch.texts)
    rows = source.samples[idx]
    assert batch.n_positive == 6 and batch.images.shape[0] == 6 and len(texts) == 12
    assert texts[:3] == [data.texts[r] for r in rows]  # the samples' captions, with their images
    assert np.array_equal(batch.images[:3], data.images[data.image_row[rows]])
    for k, row in enumerate(rows):  # each neighbour: a caption of one of the 3 nearest images, with its image
        other = batch.rows[3 + k]
        assert texts[3 + k] == data.texts[other]
        assert np.array_equal(batch.images[3 + k], data.images[data.image_row[other]])
        mine = int(np.searchsorted(image_rows, data.image_row[row]))
        sims = feats @ feats[mine]
        sims[mine] = -np.inf
        nearest = image_rows[np.argsort(-sims, kind="stable")[:3]]
        assert data.image_row[other] in nearest
    for k in range(6):  # then a swap of each of the six captions
        assert texts[6 + k] in swap_negatives(texts[k])
    again = source.batch(idx, np.random.default_rng(0))
    assert torch.equal(again.texts, batch.texts) and np.array_equal(again.rows, batch.rows)
    with pytest.raises(ValueError, match="starting model's image encoder"):
        RECIPES["negclip_aro"].build(data, cfg)
