"""The captioner's length-normalised log-likelihood: batched pair scoring against a naive per-pair loop."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from itmbench.models.captioner import END, START, WordTokenizer, build_captioner
from itmbench.models.spec import model_spec

TEXTS = [
    "a red circle",
    "two blue squares above a green triangle",
    "a small yellow hexagon",
    "there is a purple diamond to the left of an orange circle and a cyan square",
    "a picture of a zebra",  # 'zebra' is not in the vocabulary: the unknown-word token
]


class Store:
    """Items by id, as scoring.embed.ItemStore gives them."""

    def __init__(self, images: np.ndarray, texts: list[str]) -> None:
        self.images, self.text = images, texts

    def image_batch(self, ids: np.ndarray) -> np.ndarray:
        return self.images[np.asarray(ids, dtype=np.int64)]

    def texts(self, ids: np.ndarray) -> list[str]:
        return [self.text[int(i)] for i in ids]


@pytest.fixture(scope="module")
def scorer():
    torch.manual_seed(0)
    tokenizer = WordTokenizer.fit(TEXTS[:4], context_length=24, vocab_size=256)
    spec = model_spec("coca", {"family": "coca", "arch": "itm-coca-tiny", "trainer": "coca"})
    s = build_captioner(spec, torch.device("cpu"), tokenizer=tokenizer)
    # random init gives near-uniform predictions; sharpen the output layer so scores differ clearly between pairs
    with torch.no_grad():
        s.model.text_decoder.text_projection.mul_(30.0)
    return s


@pytest.fixture(scope="module")
def images():
    return np.random.default_rng(0).integers(0, 256, size=(3, 64, 64, 3), dtype=np.uint8)


def naive_score(scorer, image: np.ndarray, text: str) -> float:
    """One pair at a time through CoCa.forward (full padded context), summing log-probabilities token by token."""
    model = scorer.model.eval()
    tokens = scorer.tokenizer([text])
    with torch.no_grad():
        out = model(scorer.image_tensor(image[None]), tokens)
    logp = torch.log_softmax(out["logits"][0].double(), dim=-1)
    ids = scorer.tokenizer.ids(text)
    total = 0.0
    for t in range(1, len(ids)):  # predict w_t from w_<t: position t-1 of the shifted logits
        total += float(logp[t - 1, ids[t]])
    return total / (len(ids) - 1)


def test_tokenizer_ids_and_unknown_words():
    tok = WordTokenizer.fit(["b a", "a c"], context_length=6, vocab_size=16)
    assert tok.vocab == ["a", "b", "c"]
    assert tok.ids("a c zebra") == [START, 4, 6, 3, END]
    assert tok(["a b c d e f"]).tolist() == [[START, 4, 5, 6, 3, END]]  # truncated: the end token always fits
    with pytest.raises(ValueError, match="exceed the captioner's vocab_size 5"):
        WordTokenizer.fit(["a b"], context_length=6, vocab_size=5)


def test_pair_scores_equal_a_naive_per_pair_loop(scorer, images):
    caption_ids = np.array([0, 1, 2, 3, 4, 0, 3, 1, 4])
    image_ids = np.array([0, 0, 1, 2, 1, 2, 0, 2, 0])
    got = scorer.score_pairs(Store(images, TEXTS), caption_ids, image_ids)
    want = np.array([naive_score(scorer, images[i], TEXTS[c]) for c, i in zip(caption_ids, image_ids)])
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-5)
    assert np.all(got < 0) and np.ptp(got) > 0.05  # real log-probabilities that tell the pairs apart


def test_batching_and_padding_do_not_change_scores(scorer, images):
    store = Store(images, TEXTS)
    caption_ids = np.array([0, 1, 2, 3, 4, 0, 3, 1, 4])
    image_ids = np.array([0, 0, 1, 2, 1, 2, 0, 2, 0])
    together = scorer.score_pairs(store, caption_ids, image_ids, batch_size=512)
    one_by_one = np.array(
        [scorer.score_pairs(store, [c], [i], batch_size=1)[0] for c, i in zip(caption_ids, image_ids)]
    )
    small_batches = scorer.score_pairs(store, caption_ids, image_ids, batch_size=2)
    np.testing.assert_allclose(together, one_by_one, rtol=0, atol=2e-5)
    np.testing.assert_allclose(together, small_batches, rtol=0, atol=2e-5)
    # log_likelihoods (row pairs, batch trimmed to its longest caption) agrees with the pair scorer
    rows = scorer.log_likelihoods(images[image_ids], [TEXTS[c] for c in caption_ids], batch_size=4)
    np.testing.assert_allclose(rows, together, rtol=0, atol=2e-5)


def test_a_captioner_without_its_checkpoint_is_an_error():
    spec = model_spec("coca", {"family": "coca", "arch": "itm-coca-tiny", "trainer": "coca"})
    with pytest.raises(ValueError, match="needs its trained checkpoint"):
        build_captioner(spec, torch.device("cpu"))
    with pytest.raises(ValueError, match="not a CoCa architecture"):
        build_captioner(model_spec("x", {"family": "coca", "arch": "itm-clip-tiny"}), torch.device("cpu"))


def test_greedy_captions_are_the_argmax_of_a_full_forward_pass_at_every_step(scorer, images):
    from itmbench.models.captioner import PAD, UNKNOWN

    captions = scorer.greedy_captions(images)
    assert captions == [scorer.greedy_captions(images[i : i + 1])[0] for i in range(len(images))]  # batch-free
    model = scorer.model.eval()
    for image, caption in zip(images, captions):
        ids = scorer.tokenizer.ids(caption)
        ends = len(ids) < scorer.tokenizer.context_length  # a caption cut at the context has no end token
        if not ends:
            ids = ids[:-1]
        with torch.no_grad():
            logits = model(scorer.image_tensor(image[None]), scorer.tokenizer([caption]))["logits"][0].double()
        logits[:, [PAD, START, UNKNOWN]] = -torch.inf
        logits[:, 4 + len(scorer.tokenizer.vocab) :] = -torch.inf  # the output layer is wider than the vocabulary
        for t in range(1, len(ids)):  # w_t is the most probable token given w_<t
            assert int(logits[t - 1].argmax()) == ids[t], (caption, t)
        assert UNKNOWN not in ids
