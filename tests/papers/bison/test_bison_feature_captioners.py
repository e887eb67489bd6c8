"""BISON Table 6's captioning systems on frozen tower features (papers/bison/feature_captioners.py): the towers'
grids against the towers' own pooling, the likelihoods and greedy captions against naive step-by-step loops, the
training, and the table against its printed blocks."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch

from itmbench.models.captioner import END, PAD, START, WordTokenizer
from itmbench.models.registry import build_encoder
from itmbench.models.spec import model_spec
from itmbench.papers.bison import feature_captioners as fc
from itmbench.papers.bison.config import BisonCaptionersConfig
from itmbench.papers.published import published_wide
from itmbench.params import make_config

ARCHS = {"vit": "itm-clip-tiny", "resnet": "itm-clip-tiny-rn"}


def _encoder(arch: str):
    torch.manual_seed(0)
    return build_encoder(model_spec("t", {"family": "open_clip", "arch": arch}), torch.device("cpu"), None)


def _images(n: int = 3) -> np.ndarray:
    return np.random.default_rng(0).integers(0, 256, size=(n, 64, 64, 3), dtype=np.uint8)


@torch.no_grad()
def test_a_vit_grid_is_its_class_token_then_its_patches_as_its_pooling_reads_them():
    enc = _encoder(ARCHS["vit"])
    visual = enc.model.visual
    grid = fc.grid_features(enc, _images(), batch_size=2)
    assert grid.shape == (3, 1 + (64 // 16) ** 2, 64)
    # the class token is what the tower pools: projected, it is the tower's image feature
    torch.testing.assert_close(grid[:, 0] @ visual.proj, visual(enc.image_tensor(_images())))


@torch.no_grad()
def test_a_resnet_grid_is_the_map_its_attention_pool_reads():
    enc = _encoder(ARCHS["resnet"])
    visual = enc.model.visual
    grid = fc.grid_features(enc, _images(), batch_size=2)  # batches of two and one: the features are each image's own
    side = int(math.isqrt(grid.shape[1]))
    assert grid.shape == (3, 4, 8 * 32) and side * side == grid.shape[1]
    fmap = grid.transpose(1, 2).reshape(3, -1, side, side)
    assert not enc.model.training  # batch norms on their running statistics
    torch.testing.assert_close(visual.attnpool(fmap), visual(enc.image_tensor(_images())))
    torch.testing.assert_close(fc.grid_features(enc, _images()[2:]), grid[2:])


def test_a_tower_of_another_kind_is_refused():
    class Other:
        model = torch.nn.Module()
        model.visual = torch.nn.Linear(2, 2)

        def image_tensor(self, images):
            return torch.zeros(len(images), 2)

    with pytest.raises(ValueError, match="Linear: expected open_clip's VisionTransformer or ModifiedResNet"):
        fc.grid_features(Other(), _images(1))


TEXTS = ["a red square", "a blue circle left of a red square", "a blue circle"]


def _model(system: str, seed: int = 0) -> tuple[fc.FeatureCaptioner, WordTokenizer]:
    tok = WordTokenizer.fit(TEXTS, 10, 1000)
    torch.manual_seed(seed)
    return fc.FeatureCaptioner(system, 6, len(tok.vocab) + 4, 5, 7).eval(), tok


def _naive_log_likelihood(model: fc.FeatureCaptioner, feature: torch.Tensor, ids: list[int]) -> float:
    """One caption, one word at a time: the sum of log p(next word) over its words and END, over their count."""
    state, context = model._start(feature[None])
    total = 0.0
    for prev, nxt in zip(ids, ids[1:]):
        h, state = model._step(model.words(torch.tensor([prev])), state, context)
        total += float(torch.log_softmax(model.out(h), dim=1)[0, nxt])
    return total / (len(ids) - 1)


@pytest.mark.parametrize("system", list(fc.SYSTEMS))
def test_log_likelihoods_are_the_naive_per_word_average_whatever_the_batch_padding(system):
    model, tok = _model(system)
    feats = torch.randn(len(TEXTS), 4, 6, generator=torch.Generator().manual_seed(1))
    got = fc.log_likelihoods(model, feats, TEXTS, tok, batch_size=2)  # a batch padded to its longest caption
    want = [_naive_log_likelihood(model, feats[i], tok.ids(t)) for i, t in enumerate(TEXTS)]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("system", list(fc.SYSTEMS))
def test_greedy_takes_the_most_likely_word_until_the_end_token(system):
    model, tok = _model(system)
    feats = torch.randn(2, 4, 6, generator=torch.Generator().manual_seed(2))
    ids = model.greedy(feats, max_len=6)
    for i in range(2):
        state, context = model._start(feats[i : i + 1])
        word, naive = START, []
        for _ in range(6):
            h, state = model._step(model.words(torch.tensor([word])), state, context)
            logits = model.out(h)[0]
            logits[[PAD, START]] = -math.inf
            word = int(logits.argmax())
            naive.append(word)
            if word == END:
                break
        assert ids[i, : len(naive)].tolist() == naive
        assert (ids[i, len(naive) :] == PAD).all()


def _naive_drawn_log_probability(model: fc.FeatureCaptioner, feature: torch.Tensor, ids: list[int]) -> float:
    """A drawn caption's summed log-probability, one word at a time, over the words decoding may choose (not PAD,
    not START)."""
    state, context = model._start(feature[None])
    total, prev = 0.0, START
    for word in ids:
        h, state = model._step(model.words(torch.tensor([prev])), state, context)
        logits = model.out(h)[0]
        logits[[PAD, START]] = -math.inf
        total += float(torch.log_softmax(logits, dim=0)[word])
        prev = word
    return total


@pytest.mark.parametrize("system", list(fc.SYSTEMS))
def test_a_drawn_caption_log_probability_is_the_naive_sum_over_its_words(system):
    model, tok = _model(system)
    feats = torch.randn(3, 4, 6, generator=torch.Generator().manual_seed(4))
    ids, logp = model.decode(feats, 6, generator=torch.Generator().manual_seed(5))
    for i in range(3):
        words = [w for w in ids[i].tolist() if w != PAD]
        assert float(logp[i]) == pytest.approx(_naive_drawn_log_probability(model, feats[i], words), abs=1e-5)
    again, _ = model.decode(feats, 6, generator=torch.Generator().manual_seed(5))
    assert torch.equal(ids, again)  # the draw is the generator's


@pytest.mark.parametrize("system", list(fc.SYSTEMS))
@pytest.mark.parametrize("drawn_wins", [True, False])
def test_a_self_critical_step_makes_a_caption_that_beats_the_greedy_one_likelier(system, drawn_wins):
    """One SCST step on one image: the reference is the caption the step draws (it beats the greedy caption) or
    the greedy caption (it loses); the drawn caption's probability then rises, or falls. A second image (another
    reference) gives the IDF a corpus."""
    model, tok = _model(system)
    feats = torch.randn(2, 4, 6, generator=torch.Generator().manual_seed(6))
    cfg = make_config(BisonCaptionersConfig, scst_epochs=1, batch_size=2, lr=1e-3, max_len=6, seed=7)
    drawn_ids, _ = model.decode(feats, cfg.max_len, generator=torch.Generator().manual_seed(cfg.seed))
    drawn, greedy = fc.decode(tok, drawn_ids), fc.greedy_captions(model, feats, tok, cfg.max_len)
    assert drawn[0] != greedy[0]
    refs = [[drawn[0] if drawn_wins else greedy[0]], ["zebra"]]
    words = [w for w in drawn_ids[0].tolist() if w != PAD]
    before = _naive_drawn_log_probability(model, feats[0], words)
    # self_critical shuffles the batch with rng(seed) first: its draw is this one when the order is kept
    assert np.random.default_rng(cfg.seed).permutation(2).tolist() == [0, 1]
    fc.self_critical(model, feats, refs, tok, cfg)
    after = _naive_drawn_log_probability(model, feats[0], words)
    assert (after > before) == drawn_wins


def test_an_unknown_system_is_refused():
    with pytest.raises(ValueError, match="expected one of \\['showtell', 'showatttell', 'updown'\\]"):
        fc.FeatureCaptioner("showtell2", 6, 10, 4, 4)


@pytest.mark.parametrize("system", list(fc.SYSTEMS))
def test_training_learns_each_image_caption_and_is_seeded(system):
    """Three images, each with its own caption: trained, each image's greedy caption is its own, and the
    likelihood prefers its own image (BISON's comparison); the same seed gives the same weights."""
    tok = WordTokenizer.fit(TEXTS, 10, 1000)
    feats = torch.eye(3)[:, None, :].repeat(1, 2, 1)  # image i: regions one-hot at i
    cfg = make_config(BisonCaptionersConfig, embed=8, hidden=16, epochs=150, batch_size=3, lr=0.02, max_len=8, seed=3)
    rows = np.array([0, 1, 2])
    model = fc.train_captioner(system, feats, rows, TEXTS, tok, cfg)
    assert fc.greedy_captions(model, feats, tok, cfg.max_len) == TEXTS
    own = fc.log_likelihoods(model, feats, TEXTS, tok)
    other = fc.log_likelihoods(model, feats[[1, 2, 0]], TEXTS, tok)
    assert (own > other).all()
    short = make_config(BisonCaptionersConfig, embed=8, hidden=16, epochs=3, batch_size=2, max_len=8, seed=3)
    first, again = (fc.train_captioner(system, feats, rows, TEXTS, tok, short) for _ in range(2))
    for a, b in zip(first.state_dict().values(), again.state_dict().values()):
        assert torch.equal(a, b)


def test_decode_stops_at_the_end_token_and_reads_unknown_words():
    tok = WordTokenizer.fit(TEXTS, 10, 1000)
    red, square = tok.index["red"], tok.index["square"]
    ids = torch.tensor([[red, square, END, red], [3, red, PAD, PAD]])
    assert fc.decode(tok, ids) == ["red square", "<unk> red"]


def _cells(tower: str, shift: float) -> pd.DataFrame:
    records = []
    for k, system in enumerate(fc.SYSTEMS):
        for t, training in enumerate(fc.TRAININGS):  # as tower_cells writes them: each system's blocks in turn
            for metric in ("bleu4", "cider_d", "meteor", "tuple_f1", "bison"):
                v = 10.0 * k + shift + t
                records.append((tower, training, system, metric, v, v - 1, v + 1, 100))
    return pd.DataFrame(records, columns=list(fc.CELL_COLUMNS))


def test_table6_lays_the_world_systems_under_the_printed_blocks():
    published = {b: published_wide("bison", "Table 6", b) for b in ("Cross-entropy loss, ResNet-IN", "")}
    long = fc.table6_long(pd.concat([_cells("clip", 0), _cells("clip_rn", 5)]), published, {"clip": "ViT"})
    world = long[long["block"] == "world"]
    assert list(dict.fromkeys(world["row"])) == [  # the paper's blocks: the loss, then the features
        f"world, {training}, {tower} features: {system}"
        for training in fc.TRAININGS
        for tower in ("ViT", "clip_rn")
        for system in fc.SYSTEMS.values()
    ]
    cell = world[(world["row"] == "world, self-critical, clip_rn features: UpDown") & (world["column"] == "BISON")]
    assert cell[["value", "lo", "hi", "source"]].values.tolist() == [[26.0, 25.0, 27.0, "clip_rn"]]
    assert world[world["column"] == "SPICE"]["value"].isna().all()  # not possible here: its column stays empty
    printed = long[long["source"] == "printed"]
    upd = printed[(printed["row"] == "Cross-entropy loss, ResNet-IN: UpDown") & (printed["column"] == "BISON")]
    assert upd["value"].tolist() == [81.39]
    assert "Human" in set(printed["row"])


def test_the_table6_command_refuses_cells_of_another_tower(tmp_path, capsys):
    from itmbench.cli import main
    from itmbench.io import write_parquet

    write_parquet(tmp_path / "clip.parquet", _cells("clip_rn", 0))
    write_parquet(tmp_path / "clip_rn.parquet", _cells("clip_rn", 0))
    status = main(
        ["bison-table6", "--cells", f"clip={tmp_path / 'clip.parquet'}", "--cells",
         f"clip_rn={tmp_path / 'clip_rn.parquet'}", "--captioners", "{}", "--out-csv", str(tmp_path / "t.csv")]
    )  # fmt: skip
    assert status == 2
    assert "towers ['clip_rn']" in capsys.readouterr().err
    write_parquet(tmp_path / "clip.parquet", _cells("clip", 0).query("training == 'cross-entropy'"))
    status = main(
        ["bison-table6", "--cells", f"clip={tmp_path / 'clip.parquet'}", "--cells",
         f"clip_rn={tmp_path / 'clip_rn.parquet'}", "--captioners", "{}", "--out-csv", str(tmp_path / "t.csv")]
    )  # fmt: skip
    assert status == 2 and "trainings ['cross-entropy']; expected" in capsys.readouterr().err
    assert not (tmp_path / "t.csv").exists()


def test_the_table6_command_writes_csv_md_and_tex(tmp_path):
    from itmbench.cli import main
    from itmbench.io import write_parquet

    write_parquet(tmp_path / "clip.parquet", _cells("clip", 0))
    write_parquet(tmp_path / "clip_rn.parquet", _cells("clip_rn", 5))
    assert main(
        ["bison-table6", "--cells", f"clip={tmp_path / 'clip.parquet'}", "--cells",
         f"clip_rn={tmp_path / 'clip_rn.parquet'}", "--captioners", "{}", "--out-csv", str(tmp_path / "t.csv")]
    ) == 0  # fmt: skip
    md = (tmp_path / "t.md").read_text()
    assert "BISON Table 6" in md and "world, self-critical, clip_rn features: UpDown" in md
    assert "Self-critical sequence loss, ResNeXt-IG-3.5B: UpDown" in md
    assert (tmp_path / "t.tex").stat().st_size > 0
