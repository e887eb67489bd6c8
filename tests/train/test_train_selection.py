"""Checkpoint selection on validation hard-negative accuracy (BiVLC appendix E), against a naive count."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from unit_world import unit_world

from itmbench.models.spec import load_checkpoint, model_spec
from itmbench.params import make_config
from itmbench.train import TRAINERS
from itmbench.train.config import TrainConfig
from itmbench.train.loop import HardNegatives, TrainData, ValidationSet, hard_negative_accuracy
from itmbench.train.negatives import caption_negatives
from itmbench.world.generate import generate_world, read_world, write_world
from itmbench.world.truth import caption_fits

CFG = make_config(TrainConfig, epochs=3, batch_size=32, lr=2e-3, warmup_steps=5, select_on="hard_negative_accuracy")


@pytest.fixture(scope="module")
def items_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("world") / "items"
    write_world(generate_world(unit_world(n_train=64, n_val=16, n_test=4)), d)
    return d


class TableEncoder:
    """Embeddings looked up in fixed tables: images by their first pixel, texts by their string."""

    def __init__(self, images: dict[int, np.ndarray], texts: dict[str, np.ndarray]):
        self.images, self.texts = images, texts

    def encode_images(self, images: np.ndarray) -> torch.Tensor:
        return torch.tensor(np.stack([self.images[int(im[0, 0, 0])] for im in images]), dtype=torch.float32)

    def encode_texts(self, texts: list[str]) -> torch.Tensor:
        return torch.tensor(np.stack([self.texts[t] for t in texts]), dtype=torch.float32)


def test_hard_negative_accuracy_equals_a_naive_count():
    rng = np.random.default_rng(0)
    images = np.zeros((5, 2, 2, 3), dtype=np.uint8)
    images[:, 0, 0, 0] = np.arange(5)
    image_vec = {i: rng.normal(size=8) for i in range(5)}
    words = [f"caption {k}" for k in range(12)]
    text_vec = {w: rng.normal(size=8) for w in words}
    row = rng.integers(0, 5, size=30)
    pos = [words[k] for k in rng.integers(0, 12, size=30)]
    neg = [words[k] for k in rng.integers(0, 12, size=30)]
    neg[0] = pos[0]  # a tie counts as wrong (strictly above)
    naive = 100.0 * np.mean(
        [float(image_vec[r] @ text_vec[p]) > float(image_vec[r] @ text_vec[n]) for r, p, n in zip(row, pos, neg)]
    )
    got = hard_negative_accuracy(TableEncoder(image_vec, text_vec), HardNegatives(row, pos, neg), images)
    assert got == pytest.approx(naive, abs=1e-9) and 0 < got < 100


def test_validation_hard_negatives_are_val_captions_with_edits_false_of_their_image(items_dir):
    world = read_world(items_dir)
    val = ValidationSet.from_world(world, "w").with_hard_negatives(world, CFG, "w")
    hn = val.hard_negatives
    assert len(hn.negatives) >= 0.9 * len(val.texts)  # one per val caption where an edit exists
    data = TrainData.from_world(world, lambda t: torch.zeros(len(t), 1), "w", split="val")
    assert data.texts == val.texts
    made = caption_negatives(data.caption_ids, data.image_ids, data.texts, data.structures, data.scenes, CFG)
    assert [n.text for n in made] == hn.negatives  # the train negatives' maker, on the val split
    row_of = dict(zip(world.image_table["image_id"], range(len(world.image_table))))
    for neg, r, positive in zip(made, hn.image_row, hn.positives):
        assert positive == val.texts[neg.positive_row] and r == val.caption_image_row[neg.positive_row]
        assert np.array_equal(val.images[r], world.images[row_of[neg.image_id]])  # the positive's own image
        assert not caption_fits(neg.structure, data.scenes[neg.image_id], CFG.relation_margin)


def test_the_kept_epoch_is_the_one_of_best_hard_negative_accuracy(items_dir, tmp_path, one_torch_thread):
    spec = model_spec("m", {"family": "open_clip", "arch": "itm-clip-tiny", "trainer": "negclip"})
    summary = TRAINERS["negclip"](spec, CFG, items_dir, tmp_path / "m.pt", tmp_path / "h.json", torch.device("cpu"))
    hist = summary["history"]
    accuracy = [h["val_hard_negative_accuracy"] for h in hist]
    best = int(np.argmax(accuracy))  # the first of the best
    state = load_checkpoint(tmp_path / "m.pt")
    assert summary["select_on"] == state["select_on"] == "hard_negative_accuracy"
    assert summary["best_epoch"] == state["best_epoch"] == best + 1
    assert state["val_score"] == accuracy[best] and state["val_r1"] == hist[best]["val_r1"]


def test_select_on_names_its_choices():
    with pytest.raises(ValueError, match=r"select_on: 'accuracy' is not one of \['val_r1', 'hard_negative_accuracy'\]"):
        make_config(TrainConfig, select_on="accuracy")
