"""MCIC-COCO in the world: Algorithm 1 against a naive recount, BLEU, audit, scoring, files."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from unit_world import unit_world

from itmbench.papers.mcic import audit as mcic_audit
from itmbench.papers.mcic import build as mcic_build
from itmbench.papers.mcic import canonical as mcic_canonical
from itmbench.papers.mcic import score as mcic_score
from itmbench.papers.mcic.build import NgramCounts, sentence_bleu
from itmbench.papers.mcic.config import MCICConfig
from itmbench.params import make_config
from itmbench.scoring.embed import EmbeddingCache, write_embeddings
from itmbench.world.generate import generate_world
from itmbench.world.truth import caption_fits

WORLD = unit_world(n_train=200, n_val=30, n_test=40)
CFG = make_config(
    MCICConfig,
    pv_grid={"vector_size": [64], "epochs": [20]},
    neighbourhood=40,
    relation_margin=WORLD.relation_margin,
    max_objects=WORLD.max_objects,
)


@pytest.fixture(scope="module")
def world():
    return generate_world(WORLD)


@pytest.fixture(scope="module")
def tables(world):
    return mcic_build.build(world, CFG)


def _digest(tables: dict[str, pd.DataFrame]) -> str:
    h = hashlib.sha256()
    for name in sorted(tables):
        h.update(name.encode())
        h.update(tables[name].to_json(orient="split", double_precision=15).encode())
    return h.hexdigest()


# --- config -------------------------------------------------------------------------------------


def test_config_rejects_unknown_keys_and_bad_values():
    with pytest.raises(ValueError, match="unknown keys \\['bleu_ordr'\\]"):
        make_config(MCICConfig, {"bleu_ordr": 3})
    with pytest.raises(ValueError, match="option_order"):
        make_config(MCICConfig, {"option_order": "random"})
    with pytest.raises(ValueError, match="lambda_grid"):
        make_config(MCICConfig, lambda_grid=[0.3, 1.5])
    with pytest.raises(ValueError, match="lambda_grid"):
        make_config(MCICConfig, lambda_grid=[])
    assert make_config(MCICConfig, {"neighbourhood": 7}).neighbourhood == 7


# --- BLEU ---------------------------------------------------------------------------------------


def test_bleu_by_hand():
    ref = "a red circle left of a blue square".split()
    assert sentence_bleu(ref, ref) == pytest.approx(1.0)
    assert sentence_bleu("green hexagon".split(), ref) == 0.0
    # 'a red circle': p1 = 3/3, p2 = (2+1)/(2+1), p3 = (1+1)/(1+1), p4 = (0+1)/(0+1) -> 1 (brevity penalty 1)
    assert sentence_bleu("a red circle".split(), ref) == pytest.approx(1.0)
    # 'a blue circle': p1 = 3/3, p2 = (1+1)/(2+1) ('a blue'), p3 = 1/2, p4 = 1/1
    assert sentence_bleu("a blue circle".split(), ref) == pytest.approx((2 / 3 * 1 / 2) ** 0.25)
    # unsmoothed BLEU-4 of a 3-word candidate has no 4-grams: 0
    assert sentence_bleu("a red circle".split(), ref, smoothing="none") == 0.0
    assert sentence_bleu(ref, ref, order=2, smoothing="none") == pytest.approx(1.0)


def test_bleu_agrees_with_sacrebleu_add_k():
    sacrebleu = pytest.importorskip("sacrebleu")
    from sacrebleu.metrics.bleu import BLEU

    rng = np.random.default_rng(0)
    words = ["a", "red", "blue", "circle", "square", "left", "of", "there", "is"]
    for _ in range(200):
        cand = list(rng.choice(words, size=rng.integers(1, 9)))
        ref = list(rng.choice(words, size=rng.integers(1, 9)))
        stats = BLEU(tokenize="none").corpus_score([" ".join(cand)], [[" ".join(ref)]])
        expected = BLEU.compute_bleu(
            list(stats.counts), list(stats.totals), sys_len=1, ref_len=1, smooth_method="add-k", smooth_value=1
        ).score  # sys_len = ref_len: brevity penalty 1
        assert sentence_bleu(cand, ref) * 100 == pytest.approx(expected, abs=1e-9), (cand, ref, sacrebleu.__version__)


@pytest.mark.parametrize("smoothing", ["add_one", "none"])
def test_vectorised_bleu_equals_naive(world, smoothing):
    texts = world.caption_table["text"].tolist()[:300]
    tokens = [t.split() for t in texts]
    grams = NgramCounts(tokens, order=4)
    rng = np.random.default_rng(1)
    cand, ref = rng.integers(0, len(texts), 500), rng.integers(0, len(texts), 500)
    fast = grams.bleu(cand, ref, smoothing)
    naive = [sentence_bleu(tokens[c], tokens[r], 4, smoothing) for c, r in zip(cand, ref)]
    assert np.allclose(fast, naive, atol=1e-12)
    assert 0 < (fast > 0).mean() < 1  # the sample exercises both zero and non-zero BLEU


# --- construction -------------------------------------------------------------------------------


def test_same_params_give_identical_tables(world, tables):
    assert _digest(mcic_build.build(world, CFG)) == _digest(tables)


_SUBPROCESS = """
import hashlib
from itmbench.papers.mcic import build as mcic_build
from itmbench.papers.mcic.config import MCICConfig
from itmbench.world.generate import WorldConfig, generate_world
tables = mcic_build.build(generate_world({world!r}), {cfg!r})
h = hashlib.sha256()
for name in sorted(tables):
    h.update(name.encode())
    h.update(tables[name].to_json(orient="split", double_precision=15).encode())
print(h.hexdigest())
"""


def test_tables_do_not_depend_on_pythonhashseed(tables):
    """gensim seeds inferred vectors with hash(); the module must not, or reruns would differ."""
    seed = "2" if os.environ.get("PYTHONHASHSEED") == "1" else "1"  # differs from this process's
    env = {**os.environ, "PYTHONHASHSEED": seed}
    code = _SUBPROCESS.format(world=WORLD, cfg=CFG)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == _digest(tables)


def test_instances_are_well_formed(world, tables):
    ex = tables["examples"]
    assert set(ex["split"]) == {"dev", "test"}
    caps = world.caption_table.set_index("caption_id")
    for row in ex.itertuples():
        assert len(row.options) == 5 and len(set(row.options)) == 5
        assert row.options[row.answer_index] == row.answer == caps.at[row.caption_id, "text"]
        assert row.option_caption_ids[row.answer_index] == row.caption_id
        assert caps.at[row.caption_id, "image_id"] == row.image_id
        assert row.example_id == f"{row.image_id}_{row.caption_id - 5 * row.image_id}"
        assert row.options == sorted(row.options)  # alphabetical, as released
        decoy_images = [caps.at[c, "image_id"] for c in row.option_caption_ids if c != row.caption_id]
        assert row.image_id not in decoy_images  # decoys are captions of OTHER images
        assert {caps.at[c, "split"] for c in row.option_caption_ids} == {row.world_split}  # pool 'split'
    assert ex.groupby("split")["line"].apply(lambda s: list(s) == list(range(1, len(s) + 1))).all()
    assert ex["example_id"].is_unique


def test_true_caption_fits_its_image_by_truth(world, tables):
    ex = tables["examples"]
    fits = mcic_audit.option_fits(world, ex, CFG)
    assert fits[np.arange(len(ex)), ex["answer_index"].to_numpy()].mean() >= 0.99
    assert fits.sum() < fits.size  # most decoys do not fit, else the benchmark would be meaningless


def _naive_algorithm_1(world, split, cfg, lam):
    """Algorithm 1 written as loops over the same PV vectors: {target caption id: [decoy caption ids]}."""
    caps = world.caption_table.sort_values("caption_id")
    pool = caps[caps["split"] == cfg.splits[split]].reset_index(drop=True)
    model = mcic_build.train_pv(caps.loc[caps["split"] == cfg.pv_train_split, "text"].tolist(), cfg)
    vecs = mcic_build.infer_pv(model, pool["text"].tolist())
    cos = vecs @ vecs.T
    texts, images, ids = pool["text"].tolist(), pool["image_id"].tolist(), pool["caption_id"].tolist()
    out, dropped = {}, []
    for t in range(len(pool)):
        others = sorted((j for j in range(len(pool)) if images[j] != images[t]), key=lambda j: (-cos[t, j], j))
        scored = []
        for j in others[: cfg.neighbourhood]:
            b = sentence_bleu(texts[j].split(), texts[t].split(), cfg.bleu_order, cfg.bleu_smoothing)
            score = 0.0 if b >= cfg.bleu_threshold else lam * cos[t, j] + (1 - lam) * b
            if score > 0:
                scored.append((-score, ids[j], texts[j]))
        picked, seen = [], set()
        for _, cid, text in sorted(scored):
            if text not in seen:
                seen.add(text)
                picked.append(cid)
        if len(picked) >= cfg.n_decoys:
            out[ids[t]] = picked[: cfg.n_decoys]
        else:
            dropped.append(ids[t])
    return out, dropped


def test_decoys_equal_a_naive_algorithm_1(world, tables):
    expected, dropped = _naive_algorithm_1(world, "dev", CFG, _chosen_lambda(tables))
    dec = tables["decoys"][tables["decoys"]["split"] == "dev"].sort_values(["example_id", "rank"])
    ex = tables["examples"][tables["examples"]["split"] == "dev"]
    got = {
        int(ex_row.caption_id): dec.loc[dec["example_id"] == ex_row.example_id, "caption_id"].tolist()
        for ex_row in ex.itertuples()
    }
    assert got == expected
    assert len(got) + len(dropped) == 5 * WORLD.n_val
    construction = tables["construction"].set_index(["split", "stage"])["value"]
    assert construction[("dev", "instances")] == len(expected)
    assert construction[("dev", "captions")] == 5 * WORLD.n_val


def test_ranks_among_pv_neighbours_equal_a_full_stable_sort():
    """`positions_in_order` (the mgs-rank's positions, no sort) against `np.argsort(-cos, kind="stable")`,
    with ties (cosines on a few levels, signed zeros)."""
    rng = np.random.default_rng(7)
    for levels in (3, 50, None):
        cos = rng.uniform(-1, 1, size=(40, 60))
        if levels is not None:
            cos = np.round(cos * levels) / levels
            cos[cos == 0] = rng.choice([0.0, -0.0], size=int((cos == 0).sum()))
        for r in range(len(cos)):
            own = int(rng.integers(cos.shape[1]))
            members = np.flatnonzero((rng.random(cos.shape[1]) < 0.2) & (np.arange(cos.shape[1]) != own))
            order = np.argsort(-cos[r], kind="stable")
            rest = order[order != own]
            expected = [int(np.flatnonzero(rest == m)[0]) for m in members]
            assert mcic_build.positions_in_order(cos[r], own, members).tolist() == expected


def _chosen_lambda(tables) -> float:
    search = tables["lambda_search"]
    assert search["chosen"].sum() == 1
    return float(search.loc[search["chosen"], "lambda"].iloc[0])


def test_decoy_scores_follow_equation_1(tables):
    dec = tables["decoys"]
    lam = _chosen_lambda(tables)
    ex = tables["examples"].set_index("example_id")
    assert (dec["bleu"] < CFG.bleu_threshold).all() and (dec["score"] > 0).all()
    assert np.allclose(dec["score"], lam * dec["cos_pv"] + (1 - lam) * dec["bleu"])
    for row in dec.head(200).itertuples():
        answer = ex.at[row.example_id, "answer"]
        assert row.bleu == pytest.approx(sentence_bleu(row.text.split(), answer.split()), abs=1e-12)
        assert ex.at[row.example_id, "options"][row.position] == row.text
    ranked = dec.sort_values(["split", "example_id", "rank"])
    assert (ranked.groupby(["split", "example_id"])["score"].diff().dropna() <= 0).all()


def test_answer_positions_table_and_shuffled_order(world, tables):
    pos = tables["answer_positions"]
    for split, part in tables["examples"].groupby("split"):
        counts = np.bincount(part["answer_index"], minlength=5)
        assert pos.loc[pos["split"] == split, "n"].tolist() == counts.tolist()
        assert pos.loc[pos["split"] == split, "share"].sum() == pytest.approx(1.0)
    shuffled = mcic_build.build(
        world, make_config(MCICConfig, **{**CFG.__dict__, "option_order": "shuffled", "order_seed": 3})
    )
    a, b = tables["examples"], shuffled["examples"]
    assert a["example_id"].tolist() == b["example_id"].tolist()  # same instances, other order
    assert [sorted(o) for o in a["options"]] == [sorted(o) for o in b["options"]]
    assert (a["answer_index"].to_numpy() != b["answer_index"].to_numpy()).mean() > 0.5
    assert [o[i] for o, i in zip(b["options"], b["answer_index"])] == b["answer"].tolist()


def test_items_cover_every_image_and_option(tables):
    items = tables["items"]
    ex = tables["examples"]
    assert set(items.loc[items["kind"] == "image", "item_id"]) == set(ex["image_id"])
    options = {c for ids in ex["option_caption_ids"] for c in ids}
    assert set(items.loc[items["kind"] == "caption", "item_id"]) == options
    assert items["item_id"].dtype == np.int64 and not items.duplicated().any()


def test_write_read_round_trip_and_errors(tables, tmp_path):
    mcic_canonical.write(tables, tmp_path)
    back = mcic_canonical.read(tmp_path)
    assert _digest(back) == _digest(tables)
    decoys = pd.read_parquet(tmp_path / "decoys.parquet")
    decoys.drop(columns="bleu").to_parquet(tmp_path / "decoys.parquet")
    with pytest.raises(ValueError, match=r"decoys\.parquet: missing columns \['bleu'\]"):
        mcic_canonical.read(tmp_path)
    decoys.to_parquet(tmp_path / "decoys.parquet")
    (tmp_path / "items.parquet").unlink()  # an interrupted write: items.parquet, written last, is absent
    with pytest.raises(FileNotFoundError, match="items.parquet: missing"):
        mcic_canonical.read(tmp_path)


# --- audit --------------------------------------------------------------------------------------


def test_audit_equals_a_naive_recount(world, tables):
    audit = mcic_audit.audit(world, tables, CFG)
    assert list(audit.columns) == ["row", "column", "value", "lo", "hi"]
    cell = audit.set_index(["row", "column"])
    scenes = world.scenes()
    structures = dict(zip(world.caption_table["caption_id"], world.structures()))
    for split, ex in tables["examples"].groupby("split"):
        fit_decoys = n_decoys = inst_with = 0
        oracle = []
        for row in ex.itertuples():
            fits = [
                caption_fits(structures[c], scenes[row.image_id], WORLD.relation_margin) for c in row.option_caption_ids
            ]
            decoy_fits = [f for j, f in enumerate(fits) if j != row.answer_index]
            fit_decoys += sum(decoy_fits)
            n_decoys += len(decoy_fits)
            inst_with += any(decoy_fits)
            oracle.append(fits[row.answer_index] / max(sum(fits), 1))
        assert cell.loc[("decoys fitting the image (% of decoys)", split), "value"] == pytest.approx(
            100 * fit_decoys / n_decoys
        )
        assert cell.loc[("instances with a fitting decoy (%)", split), "value"] == pytest.approx(
            100 * inst_with / len(ex)
        )
        assert cell.loc[("truth oracle, uniform among fitting options (%)", split), "value"] == pytest.approx(
            100 * np.mean(oracle)
        )
        for j in range(5):
            prior = cell.loc[(f"always answer position {j} (%)", split)]
            assert prior["value"] == pytest.approx(100 * (ex["answer_index"] == j).mean())
            assert prior["lo"] <= prior["value"] <= prior["hi"]
        assert 0 < fit_decoys < n_decoys
    assert cell.loc[("raters: majority, at least 2 of 3 correct (%)", "paper"), "value"] == 82.8


def test_simulated_raters_follow_truth_and_noise():
    rng = np.random.default_rng(0)
    n = 4000
    fits = rng.random((n, 5)) < 0.3
    answer = rng.integers(0, 5, n)
    fits[np.arange(n), answer] = True
    quiet = mcic_audit.simulate_raters(fits, answer, make_config(MCICConfig, rater_noise=0.0), stream=0)
    assert np.take_along_axis(fits, quiet, axis=1).all()  # without noise a rater picks a fitting option
    only = fits.sum(axis=1) == 1
    assert (quiet[only] == answer[only, None]).all()
    expected = (1 / fits.sum(axis=1)).mean()  # uniform among fitting options
    assert (quiet == answer[:, None]).mean() == pytest.approx(expected, abs=0.02)
    loud = mcic_audit.simulate_raters(fits, answer, make_config(MCICConfig, rater_noise=1.0), stream=0)
    assert (loud == answer[:, None]).mean() == pytest.approx(0.2, abs=0.02)
    assert np.array_equal(
        quiet, mcic_audit.simulate_raters(fits, answer, make_config(MCICConfig, rater_noise=0.0), stream=0)
    )


# --- scoring ------------------------------------------------------------------------------------


def _cache(tmp_path: Path, tables, world, oracle: bool, dim: int = 32) -> EmbeddingCache:
    rng = np.random.default_rng(7)
    items = tables["items"]
    image_ids = items.loc[items["kind"] == "image", "item_id"].to_numpy()
    caption_ids = items.loc[items["kind"] == "caption", "item_id"].to_numpy()

    def unit(x: np.ndarray) -> np.ndarray:
        return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)

    image_emb = unit(rng.standard_normal((len(image_ids), dim)))
    if oracle:  # a caption sits near its own image: the true option scores high, decoys (other images) low
        own = world.caption_table.set_index("caption_id").loc[caption_ids, "image_id"].to_numpy()
        row = {int(i): r for r, i in enumerate(image_ids)}
        base = np.stack(
            [image_emb[row[int(i)]] if int(i) in row else unit(rng.standard_normal((1, dim)))[0] for i in own]
        )
        caption_emb = unit(base + 0.3 * rng.standard_normal((len(caption_ids), dim)) / np.sqrt(dim))
    else:
        caption_emb = unit(rng.standard_normal((len(caption_ids), dim)))
    path = tmp_path / ("oracle.npz" if oracle else "random.npz")
    write_embeddings(
        path, {"image_ids": image_ids, "image_emb": image_emb, "caption_ids": caption_ids, "caption_emb": caption_emb}
    )
    return EmbeddingCache(path)


def test_random_embeddings_score_near_chance(world, tables, tmp_path):
    scores = mcic_score.score_dual(tables, _cache(tmp_path, tables, world, oracle=False))
    assert len(scores) == len(tables["examples"])
    summary = mcic_score.summarize(scores)
    n = len(scores)
    acc = scores["correct"].mean()
    assert abs(acc - 0.2) < 4 * np.sqrt(0.16 / n)
    for split, metric in summary["metrics"].items():
        assert metric["lo"] <= metric["value"] <= metric["hi"]
        p = metric["value"] / 100
        assert summary["standard_error"][split] == pytest.approx(100 * np.sqrt(p * (1 - p) / metric["n"]))
    assert set(summary["metrics"]) == {"accuracy_dev", "accuracy_test"}


def test_oracle_embeddings_score_far_above_chance(world, tables, tmp_path):
    scores = mcic_score.score_dual(tables, _cache(tmp_path, tables, world, oracle=True))
    summary = mcic_score.summarize(scores)
    for metric in summary["metrics"].values():
        assert metric["value"] > 90 and metric["lo"] > 80
    # scores recompute the metric: true option strictly above every decoy
    s = scores[mcic_score.SCORE_COLUMNS].to_numpy()
    true = s[np.arange(len(s)), scores["answer_index"]]
    assert np.array_equal(scores["correct"], (s >= true[:, None]).sum(axis=1) == 1)


def test_summarize_counts_a_tie_as_wrong():
    scores = pd.DataFrame(
        {"split": ["dev", "dev"], "answer_index": [0, 1], **{c: [1.0, 0.5] for c in mcic_score.SCORE_COLUMNS}}
    )
    summary = mcic_score.summarize(scores)
    assert summary["metrics"]["accuracy_dev"]["value"] == 0.0
    assert summary["ties_counted_wrong"]["dev"] == 2


def test_audit_rejects_tables_from_another_world(tables):
    other = generate_world(unit_world(n_train=5, n_val=2, n_test=2))
    with pytest.raises(KeyError, match="not in the world"):
        mcic_audit.audit(other, tables, CFG)
