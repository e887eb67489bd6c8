"""The unimodal baselines (bag of words, pixel features), MCIC's FFNN option scorer, and the capability table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from unit_world import unit_world

from itmbench.models.capabilities import absent_reason, cell
from itmbench.models.option_scorer import mcic_accuracy_of, option_rows, train_option_net
from itmbench.models.registry import FAMILIES, build_encoder
from itmbench.models.spec import FAMILY_NAMES, model_spec
from itmbench.models.unimodal import BagOfWords, PixelFeatures, train_bag_of_words
from itmbench.papers.registry import GALLERY_BENCHMARKS, TASK_MODALITIES
from itmbench.scoring.retrieval import first_positive_ranks


def test_tfidf_by_hand():
    bow = BagOfWords.fit(["a red circle", "a blue circle", "a red square"])
    assert bow.vocab == ["a", "blue", "circle", "red", "square"]
    # smooth idf: ln((1 + 3) / (1 + df)) + 1
    np.testing.assert_allclose(bow.idf, np.log(4 / (1 + np.array([3, 1, 2, 2, 1]))) + 1)
    v = bow.vectors(["red red circle zebra"])[0]  # tf: red 2, circle 1; 'zebra' is unknown
    want = np.array([0, 0, np.log(4 / 3) + 1, 2 * (np.log(4 / 3) + 1), 0])
    np.testing.assert_allclose(v, want / np.linalg.norm(want))
    assert np.all(bow.vectors(["zebra"]) == 0)  # no known word: the zero vector (scores 0 with anything)


def test_bag_of_words_t2t_retrieval_on_a_hand_example():
    bow = BagOfWords.fit(["a red circle", "a blue square", "a green triangle", "two red circles"])
    queries = ["a red circle", "a blue square"]
    gallery = ["a green triangle", "a blue square on the left", "the red circle is large"]
    q, g = bow.encode_texts(queries), bow.encode_texts(gallery)
    # query 0's positive is gallery 2 (red circle), query 1's is gallery 1 (blue square): both ranked first
    ranks = first_positive_ranks(q, g, [np.array([2]), np.array([1])])
    assert ranks.tolist() == [1, 1]
    sims = (q @ g.T).numpy()
    assert sims[0, 2] > sims[0, 1] > 0 and sims[1, 1] > sims[1, 0]


def test_bag_of_words_fits_on_the_train_split_only(tmp_path):
    from itmbench.world.generate import generate_world, write_world

    world = generate_world(unit_world(n_train=30, n_val=5, n_test=5))
    write_world(world, tmp_path / "items")
    spec = model_spec("bow", {"family": "bag_of_words", "trainer": "bow_tfidf"})
    summary = train_bag_of_words(spec, None, tmp_path / "items", tmp_path / "m.pt", tmp_path / "h.json", None)
    caps = world.caption_table
    train_words = {w for t in caps.loc[caps["split"] == "train", "text"] for w in t.lower().split()}
    encoder = build_encoder(spec, torch.device("cpu"), tmp_path / "m.pt")
    assert set(encoder.vocab) == {w.strip(".,") for w in train_words} and summary["vocabulary"] == len(encoder.vocab)
    assert encoder.item_kinds == ("caption",)
    assert torch.allclose(encoder.encode_texts(["a red circle"]).norm(dim=1), torch.ones(1))


def test_pixel_features_see_colour_and_place():
    img = np.zeros((3, 16, 16, 3), dtype=np.uint8)
    img[0, :8, :8] = (255, 0, 0)  # red, top left
    img[1, :8, :8] = (0, 0, 255)  # blue, top left
    img[2, 8:, 8:] = (255, 0, 0)  # red, bottom right
    f = PixelFeatures(colour_bins=4, grid=2, saturation_min=40, thumbnail_weight=0.5).encode_images(img).numpy()
    np.testing.assert_allclose(np.linalg.norm(f, axis=1), 1.0, atol=1e-6)
    sims = f @ f.T
    assert sims[0, 2] > sims[0, 1]  # same colour elsewhere is closer than another colour in the same place
    assert sims[0, 1] > sims[1, 2] and sims[0, 2] < 1 - 1e-3  # and the place still counts


def test_ffnn_trains_on_separable_data_and_beats_chance():
    rng = np.random.default_rng(0)
    n, k, dim = 300, 5, 8
    images = rng.normal(size=(n, dim))
    # the true option is the image's own vector plus noise; decoys are other random vectors
    options = rng.normal(size=(n, k, dim))
    answer = rng.integers(0, k, size=n)
    options[np.arange(n), answer] = images + 0.3 * rng.normal(size=(n, dim))
    ids = np.arange(n * k).reshape(n, k)
    examples = pd.DataFrame(
        {"image_id": np.arange(n), "option_caption_ids": [list(r) for r in ids], "answer_index": answer}
    )

    class Cache:
        def get(self, kind, idx):
            src = images if kind == "image" else options.reshape(n * k, dim)
            return torch.from_numpy(src[np.asarray(idx)]).float()

    train, test = examples.iloc[:200], examples.iloc[200:]
    image, caption, label = option_rows(train)
    assert label.reshape(-1, k).sum(axis=1).tolist() == [1] * 200  # one 'yes' per instance, at its answer
    cache = Cache()
    opts = {"hidden": 64, "epochs": 30, "batch_size": 50, "lr": 0.05, "clip_norm": 4.0, "input": "concat", "seed": 0}
    net, history = train_option_net(cache.get("image", image), cache.get("caption", caption), label, opts)
    assert history[-1]["train_loss"] < history[0]["train_loss"]
    acc = mcic_accuracy_of(net, test, cache)
    assert acc > 60.0  # chance is 20%


def test_the_registry_builds_every_family_a_spec_may_name():
    assert sorted(FAMILIES) == sorted(FAMILY_NAMES)
    with pytest.raises(ValueError, match="unknown family 'clip'; expected one of"):
        model_spec("m", {"family": "clip"})


def on(benchmark: str, gallery_models: tuple[str, ...] = (), name: str = "") -> dict:
    """The capabilities' arguments for one of the papers' benchmarks (as the workflow passes them)."""
    return {
        "modalities": TASK_MODALITIES[benchmark],
        "gallery": benchmark in GALLERY_BENCHMARKS,
        "gallery_models": gallery_models,
        "name": name,
    }


def test_capabilities_plan_the_cells():
    dual = {"family": "open_clip"}
    coca, ffnn = {"family": "coca"}, {"family": "ffnn", "upstream": "clip"}
    bow, pixels = {"family": "bag_of_words"}, {"family": "pixel_features"}
    assert [cell(dual, **on(b)) for b in ("bison", "cxc", "retrieval")] == ["scored"] * 3
    assert [cell(coca, **on(b, (), "coca")) for b in ("bison", "mcic", "bivlc")] == ["scored"] * 3
    assert [cell(coca, **on(b, (), "coca")) for b in ("retrieval", "eccv", "cxc")] == ["not_scored"] * 3
    assert cell(ffnn, **on("eccv", ("ffnn",), "ffnn")) == "scored"
    assert cell(coca, **on("eccv", ("ffnn",), "coca")) == "not_scored"
    assert cell(bow, **on("cxc")) == "scored" and cell(bow, **on("bison")) == "not_applicable"
    assert cell(pixels, **on("cxc")) == "scored" and cell(pixels, **on("retrieval")) == "not_applicable"
    assert absent_reason(bow, **on("mcic")) == "not applicable (bag_of_words scores text-text only)"
    assert absent_reason(coca, **on("cxc", (), "coca")).startswith("not scored (cross scorer;")
    assert absent_reason(dual, **on("cxc")) == ""
    assert cell(coca, {"image-text"}, gallery=False) == "scored"  # what the benchmark compares, not its name
    with pytest.raises(ValueError, match="compare some of"):
        cell(dual, {"audio-text"})
    with pytest.raises(ValueError, match="compare some of"):
        cell(dual, frozenset())
