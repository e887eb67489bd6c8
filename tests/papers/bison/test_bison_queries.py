"""BISON's Table 2, Figure 6 and Figure 14: hand-worked instances, naive references and a small world end to end."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from unit_world import unit_world

from itmbench.cli import main
from itmbench.errors import InputError
from itmbench.metrics.intervals import wilson_interval
from itmbench.papers.bison import build as bison_build
from itmbench.papers.bison import canonical as bison_canonical
from itmbench.papers.bison import queries
from itmbench.papers.bison.config import BisonConfig
from itmbench.papers.published import published_wide
from itmbench.params import make_config
from itmbench.scoring.embed import EmbeddingCache, write_embeddings
from itmbench.world.generate import generate_world, write_world

# images 1 and 2 with three captions each, image 3 with two; the text of 11 is repeated by 21
CAPTIONS = pd.DataFrame(
    [
        (10, 1, "test", "a red circle"),
        (11, 1, "test", "there is a red circle above a blue square"),
        (12, 1, "test", "a blue square"),
        (20, 2, "test", "a red circle"),
        (21, 2, "test", "there is a red circle above a blue square"),
        (22, 2, "test", "two green triangles"),
        (30, 3, "test", "an image with a small purple hexagon"),
        (31, 3, "test", "a purple hexagon on a plain background"),
        (40, 4, "train", "a cyan diamond"),
    ],
    columns=["caption_id", "image_id", "split", "text"],
)
# instance 0: query 12 for image 1 against 2; 1: query 22 for image 2 against 1; 2: query 30 for image 3 against 1
ANNOTATIONS = pd.DataFrame(
    {
        "bison_id": [0, 1, 2],
        "caption_id": [12, 22, 30],
        "image_id_0": [1, 2, 1],
        "image_id_1": [2, 1, 3],
        "true_image_id": [1, 2, 3],
        "false_image_id": [2, 1, 1],
    }
)
TEST = CAPTIONS[CAPTIONS["split"] == "test"].reset_index(drop=True)
LABELS = {"split": "split", "bison": "bison"}


def test_table2_counts_a_hand_worked_split():
    counts = queries.table2_counts(ANNOTATIONS, TEST)
    # 8 test captions of 3 images, 6 distinct texts; 3 triples over images {1, 2, 3}, 3 distinct queries
    assert counts == {
        "split": {"Number of examples": 8, "Unique images": 3, "Unique captions": 6},
        "bison": {"Number of examples": 3, "Unique images": 3, "Unique captions": 3},
    }


def test_table2_lays_the_printed_columns_beside_the_world_and_the_image_share_has_a_wilson_interval():
    long = queries.table2_long(ANNOTATIONS, TEST, published_wide("bison", "Table 2"), LABELS)
    cells = long.set_index(["row", "column"])
    assert cells.loc[("Number of examples", "COCO-BISON (printed)"), "value"] == 54253
    assert cells.loc[("Unique captions", "COCO val (printed)"), "value"] == 197792
    assert cells.loc[("Unique images", "bison"), "value"] == 3
    printed = cells.loc[(queries.SHARE_ROW, "COCO-BISON (printed)"), "value"]
    assert printed == pytest.approx(100 * 38680 / 40504)  # the paper's "about 95.5%"
    share = cells.loc[(queries.SHARE_ROW, "bison")]
    lo, hi = wilson_interval(3, 3)
    assert (share["value"], share["lo"], share["hi"]) == pytest.approx((100.0, 100 * lo, 100 * hi))


def test_a_query_outside_the_split_is_refused_naming_it():
    bad = ANNOTATIONS.assign(caption_id=[12, 22, 40])  # 40 is a train caption
    with pytest.raises(InputError, match="caption_id 40"):
        queries.table2_counts(bad, TEST)


def test_figure6_shares_agree_with_a_naive_count():
    long = queries.figure6_long(ANNOTATIONS, TEST, LABELS)
    length = long[long["panel"] == "length"].set_index(["bin", "column"])
    texts = {"split": list(TEST["text"]), "bison": ["a blue square", "two green triangles", TEST["text"][6]]}
    for group, group_texts in texts.items():
        n_words = [len(t.split()) for t in group_texts]
        for k in set(n_words):
            expected = 100 * sum(n == k for n in n_words) / len(n_words)
            assert length.loc[(str(k), group), "value"] == pytest.approx(expected)
        assert length.xs(group, level="column")["value"].sum() == pytest.approx(100)
    pos = long[long["panel"] == "pos"].set_index(["bin", "column"])
    # the queries' 3 + 3 + 7 words: a/DET blue/ADJ square/NOUN; two/NUM green/ADJ triangles/NOUN;
    # an/DET image/NOUN with/ADP a/DET small/ADJ purple/ADJ hexagon/NOUN
    assert pos.loc[("NOUN", "bison"), "value"] == pytest.approx(100 * 4 / 13)
    assert pos.loc[("ADJ", "bison"), "value"] == pytest.approx(100 * 4 / 13)
    assert pos.loc[("NUM", "bison"), "value"] == pytest.approx(100 * 1 / 13)
    summary = long[long["panel"] == "summary"].set_index(["bin", "column"])
    assert summary.loc[("mean", "bison"), "value"] == pytest.approx(13 / 3)


def test_longest_choice_counts_ties_and_the_uniform_rate():
    chosen, expected = queries.longest_choice(ANNOTATIONS, TEST)
    # image 1: lengths 3, 9, 3 (query 12 is not longest); image 2: 3, 9, 3 (22 not); image 3: 7, 7 (a tie: 30 is)
    assert chosen.tolist() == [False, False, True]
    assert expected == pytest.approx((1 / 3 + 1 / 3 + 2 / 2) / 3)


def test_the_lexicon_tags_every_word_the_world_grammar_writes():
    world = generate_world(unit_world(n_train=200, n_val=10, n_test=10))
    lexicon = queries.world_lexicon()
    for text in world.caption_table["text"]:
        assert len(queries.world_pos(text, lexicon)) == len(text.split())
    with pytest.raises(InputError, match="'dog'"):
        queries.world_pos("a dog", lexicon)


def test_query_choices_are_the_longest_and_a_seeded_caption_of_the_positive_image():
    choices = queries.query_choices(ANNOTATIONS, TEST, seed=3)
    assert choices["bison"].tolist() == [12, 22, 30]
    assert choices["longest"].tolist() == [11, 21, 30]  # image 3's two captions tie: the smallest id
    own = {1: [10, 11, 12], 2: [20, 21, 22], 3: [30, 31]}
    for bison_id, image, picked in zip(choices["bison_id"], [1, 2, 3], choices["random"]):
        ids = own[image]
        assert picked == ids[np.random.default_rng([3, int(bison_id)]).integers(len(ids))]
    assert queries.query_choices(ANNOTATIONS, TEST, seed=3).equals(choices)


def _cache(tmp_path: Path, rng: np.random.Generator) -> EmbeddingCache:
    def unit(n):
        v = rng.normal(size=(n, 8))
        return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)

    path = tmp_path / "items.npz"
    write_embeddings(
        path,
        {
            "image_ids": np.array([1, 2, 3], dtype=np.int64),
            "image_emb": unit(3),
            "caption_ids": TEST["caption_id"].to_numpy(np.int64),
            "caption_emb": unit(len(TEST)),
        },
    )
    return EmbeddingCache(path)


def test_figure14_accuracy_agrees_with_a_naive_loop(tmp_path):
    cache = _cache(tmp_path, np.random.default_rng(0))
    choices = queries.query_choices(ANNOTATIONS, TEST, seed=0)
    long = queries.figure14_long(ANNOTATIONS, choices, {"m": cache}, {"m": "Model M"})
    for kind in queries.QUERY_KINDS:
        hits = 0
        for (_, inst), query in zip(ANNOTATIONS.iterrows(), choices[kind]):
            q = cache.get("caption", np.array([query]))[0].astype(float)
            s_true = float(q @ cache.get("image", np.array([inst["true_image_id"]]))[0])
            s_false = float(q @ cache.get("image", np.array([inst["false_image_id"]]))[0])
            hits += s_true > s_false
        row = long[long["query"] == kind].iloc[0]
        assert row["row"] == "Model M"
        assert (row["correct"], row["value"]) == (hits, pytest.approx(100 * hits / 3))


@pytest.fixture(scope="module")
def world_bison(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("bisonq")
    wcfg = unit_world(n_train=300, n_val=10, n_test=150)
    world = generate_world(wcfg)
    write_world(world, root / "items")
    tables = bison_build.build(world, make_config(BisonConfig, vector_size=32, epochs=5), world_cfg=wcfg)
    bison_canonical.write(tables, root / "bison")
    return root


def test_commands_write_table2_and_the_figures_deterministically(world_bison, tmp_path):
    bench, captions = str(world_bison / "bison"), str(world_bison / "items" / "captions.parquet")
    common = ["--bench", bench, "--captions", captions, "--config", '{"split": "test", "seed": 0}']
    for run in ("a", "b"):
        out = tmp_path / run
        assert main(["bison-table2", *common, "--out-csv", str(out / "table2.csv")]) == 0
        assert main(["bison-figure-data", "--figure", "figure6", *common, "--out-csv", str(out / "figure6.csv")]) == 0
        assert main(["bison-figure", "--figure", "figure6", "--data", str(out / "figure6.csv"),
                     "--out-png", str(out / "figure6.png")]) == 0  # fmt: skip
    for name in ("table2.csv", "table2.md", "table2.tex", "figure6.csv", "figure6.png", "figure6.pdf"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    table2 = pd.read_csv(tmp_path / "a" / "table2.csv").set_index(["row", "column"])
    ann = bison_canonical.read(world_bison / "bison")["annotations"]
    assert table2.loc[("Number of examples", "world BISON"), "value"] == len(ann)
    assert table2.loc[("Number of examples", "world test split"), "value"] == 150 * 5


def test_figure14_needs_embeddings_and_figure6_takes_none(world_bison, tmp_path, capsys):
    bench, captions = str(world_bison / "bison"), str(world_bison / "items" / "captions.parquet")
    common = ["--bench", bench, "--captions", captions, "--out-csv", str(tmp_path / "f.csv")]
    assert main(["bison-figure-data", "--figure", "figure14", *common]) != 0
    assert "--embeddings" in capsys.readouterr().err
    assert main(["bison-figure-data", "--figure", "figure6", *common, "--embeddings", "m=x.npz"]) != 0
    assert "drop --embeddings" in capsys.readouterr().err
    assert not (tmp_path / "f.csv").exists()


# --- Figure 9 ----------------------------------------------------------------------------------------------------


def test_negation_adds_not_to_the_first_verb_or_leads_a_caption_without_one():
    rng = np.random.default_rng(0)
    assert queries.perturb("a red circle is above a blue square", "negation", rng) == (
        "a red circle is not above a blue square"
    )
    assert (
        queries.perturb("an image showing two red circles", "negation", rng) == "an image not showing two red circles"
    )
    assert queries.perturb("there are two red circles", "negation", rng) == "there are not two red circles"
    assert queries.perturb("a red circle", "negation", rng) == "not a red circle"


def test_relation_phrases_are_matched_longest_first_without_overlap():
    tokens = "a red circle to the left of a blue square".split()
    assert queries._relation_spans(tokens) == [(3, 4, "left_of")]  # not also "left of" inside it
    assert queries._relation_spans("a shape on top of a circle".split()) == [(2, 3, "above")]


def test_synonyms_and_hypernyms_replace_one_word_of_the_grammar():
    text = "two red circles above a blue shape"
    seen_syn, seen_hyp = set(), set()
    for seed in range(40):
        seen_syn.add(queries.perturb(text, "synonym", np.random.default_rng(seed)))
        seen_hyp.add(queries.perturb(text, "hypernym", np.random.default_rng(seed)))
    assert seen_syn == {
        "two red circles over a blue shape",
        "two red circles on top of a blue shape",
        "two red circles above a blue object",
    }
    assert seen_hyp == {"two red shapes above a blue shape"}  # the generic "shape" has no hypernym here
    assert queries.perturb("a red circle", "synonym", np.random.default_rng(0)) == "a red circle"  # nothing to swap
    assert queries.perturb("a red object", "hypernym", np.random.default_rng(0)) == "a red object"


def test_permutation_and_reversal_keep_the_words():
    text = "there is a small red circle left of a blue square"
    permuted = queries.perturb(text, "permutation", np.random.default_rng(1))
    assert sorted(permuted.split()) == sorted(text.split()) and permuted != text
    assert queries.perturb(text, "reversal", np.random.default_rng(1)) == " ".join(reversed(text.split()))


def test_perturbed_queries_are_seeded_and_flag_unaltered_queries():
    perturbed = queries.perturbed_queries(ANNOTATIONS, TEST, seed=5)
    assert list(perturbed["perturbation"][:6]) == ["original", *queries.PERTURBATIONS]
    one = perturbed[perturbed["bison_id"] == 0].set_index("perturbation")
    assert one.loc["original", "text"] == "a blue square" and not one.loc["original", "altered"]
    assert not one.loc["synonym", "altered"]  # "a blue square" has no relation phrase nor generic noun
    assert one.loc["hypernym", "text"] == "a blue shape" and one.loc["hypernym", "altered"]
    assert queries.perturbed_queries(ANNOTATIONS, TEST, seed=5).equals(perturbed)


def test_perturbation_scores_and_figure9_agree_with_a_naive_count():
    perturbed = queries.perturbed_queries(ANNOTATIONS, TEST, seed=0)

    def score(texts, image_ids):  # any deterministic s(q, I); ties where the text has an even length
        return [(len(t) % 2) * (i % 2) + (len(t) % 3) * ((i + 1) % 2) for t, i in zip(texts, image_ids)]

    scores = queries.perturbation_scores(ANNOTATIONS, perturbed, score)
    truth = ANNOTATIONS.set_index("bison_id")

    def pick(text, bison_id):
        t, f = truth.loc[bison_id, "true_image_id"], truth.loc[bison_id, "false_image_id"]
        st, sf = score([text], [t])[0], score([text], [f])[0]
        return t if st > sf else f if sf > st else queries.PICK_NONE

    for kind in queries.PERTURBATIONS:
        naive = 0
        altered = 0
        for bison_id in ANNOTATIONS["bison_id"]:
            rows = perturbed[perturbed["bison_id"] == bison_id].set_index("perturbation")
            if rows.loc[kind, "altered"]:
                altered += 1
                naive += pick(rows.loc[kind, "text"], bison_id) != pick(rows.loc["original", "text"], bison_id)
        cell = queries.figure9_long({"m": scores}, {}).set_index("perturbation").loc[kind]
        assert (cell["changed"], cell["n"]) == (naive, altered)
    assert not scores.loc[scores["perturbation"] == "original", "changed"].any()


RANDOM_SPEC = '{"family": "random"}'


def test_perturbation_command_scores_the_original_query_as_the_benchmark_does(world_bison, tmp_path, capsys):
    from itmbench.models.registry import build_encoder, pick_device
    from itmbench.models.spec import model_spec
    from itmbench.papers.bison import score as bison_score
    from itmbench.scoring.embed import ItemStore, embed_items, folder_items

    bench, captions = str(world_bison / "bison"), str(world_bison / "items" / "captions.parquet")
    config = '{"split": "test", "seed": 0}'
    out = tmp_path / "random.parquet"
    args = ["--model", "random", "--spec", RANDOM_SPEC, "--items", str(world_bison / "items"), "--bench", bench]
    assert (
        main(["bison-perturbation-scores", *args, "--captions", captions, "--config", config, "--out", str(out)]) == 0
    )
    scores = pd.read_parquet(out)
    encoder = build_encoder(model_spec("random", {"family": "random"}), pick_device("cpu"))
    cache_path = tmp_path / "items.npz"
    write_embeddings(
        cache_path,
        embed_items(encoder, ItemStore(world_bison / "items"), folder_items(world_bison / "items", ["test"])),
    )
    tables = bison_canonical.read(bench)
    reference = bison_score.score_dual(tables, EmbeddingCache(cache_path))
    original = scores[scores["perturbation"] == "original"]
    assert original["correct"].tolist() == reference["correct"].tolist()
    np.testing.assert_allclose(original["score_true"], reference["score_true"], atol=1e-6)
    common = ["--bench", bench, "--captions", captions, "--config", config]
    fig9 = tmp_path / "figure9.csv"
    assert main(["bison-figure-data", "--figure", "figure9", *common, "--scores", f"random={out}",
                 "--out-csv", str(fig9)]) == 0  # fmt: skip
    assert (
        main(["bison-figure", "--figure", "figure9", "--data", str(fig9), "--out-png", str(tmp_path / "f9.png")]) == 0
    )
    assert (tmp_path / "f9.pdf").exists()
    # the random encoder hashes the text: about half of the altered queries change their pick
    permutation = pd.read_csv(fig9).set_index("perturbation").loc["permutation"]
    assert 30 < permutation["value"] < 70
    other = ["--bench", bench, "--captions", captions, "--config", '{"split": "test", "seed": 1}']
    assert main(["bison-figure-data", "--figure", "figure9", *other, "--scores", f"random={out}",
                 "--out-csv", str(tmp_path / "x.csv")]) != 0  # fmt: skip
    assert "seed 1" in capsys.readouterr().err


# --- Table 4 -----------------------------------------------------------------------------------------------------


def test_table4_metrics_are_pycocoevalcaps_and_lie_under_the_printed_rows():
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider

    from itmbench.papers.bison import captioning

    generated = pd.DataFrame({"image_id": [1, 2, 3], "caption": ["a red circle", "a red circle", "a purple hexagon"]})
    metrics = ["bleu4", "cider_d", "tuple_f1"]
    cells = captioning.metric_cells(generated, TEST, metrics, n_boot=50, seed=0, confidence=0.95)
    refs = {i: [t for t in TEST.loc[TEST["image_id"] == img, "text"]] for i, img in enumerate([1, 2, 3])}
    res = {i: [c] for i, c in enumerate(generated["caption"])}
    bleu, _ = Bleu(4).compute_score(refs, res, verbose=0)
    cider, _ = Cider().compute_score(refs, res)
    assert cells["bleu4"][0] == pytest.approx(100 * bleu[3])
    assert cells["cider_d"][0] == pytest.approx(100 * cider)
    assert cells["cider_d"][1] <= cells["cider_d"][0] <= cells["cider_d"][2]
    doc = {"metrics": {"bison": {"value": 88.0, "lo": 85.0, "hi": 90.0, "n": 650}}}
    published = {b: published_wide("bison", "Table 4", b) for b in ("Cross-entropy loss", "")}
    long = captioning.table4_long({"coca": cells}, {"coca": doc}, published, {"coca": "Captioner"})
    world = long[long["row"] == "world: Captioner"].set_index("column")
    analogue = "Tuple F1 (world SPICE analogue)"  # beside the printed SPICE, in a column of its own
    assert list(world.index) == ["BLEU-4", "CIDEr", "SPICE", analogue, "METEOR", "BISON"]
    assert np.isnan(world.loc["SPICE", "value"]) and np.isnan(world.loc["METEOR", "value"])
    # by hand: 'a red circle' has 2 tuples, both among image 1's captions' 5 (P 1, R 2/5: F1 4/7) and image 2's 8
    # (F1 2/5); 'a purple hexagon' 2, both among image 3's 3 (hexagon; purple, small): F1 4/5; mean over images x100
    assert world.loc[analogue, "value"] == pytest.approx(100 * (4 / 7 + 2 / 5 + 4 / 5) / 3)
    assert world.loc[analogue, "lo"] <= world.loc[analogue, "value"] <= world.loc[analogue, "hi"]
    assert analogue not in set(long.loc[long["source"] == "printed", "column"])  # the printed systems have SPICE
    assert (world.loc["BISON", "value"], world.loc["BISON", "lo"]) == (88.0, 85.0)
    printed = long.set_index(["row", "column"])
    assert printed.loc[("Cross-entropy loss: UpDown", "CIDEr"), "value"] == 105.40
    assert printed.loc[("Human", "BISON"), "value"] == 100.0
    with pytest.raises(InputError, match="image 4"):
        captioning.references_of(TEST, np.array([4]), "generated")


def test_a_dual_encoders_perturbation_scores_encode_each_text_once_in_the_same_batches():
    """`_model_scorer`: the true and the false image's scores of one set of queries encode the texts once (the second
    call reuses the first's embeddings); other texts are encoded anew; the scores are those of encoding each time."""
    import torch

    from itmbench.papers.bison.commands import _model_scorer

    class Store:
        def image_batch(self, ids):
            return torch.as_tensor(np.asarray(ids, np.float32))[:, None]

    class Dual:
        def __init__(self):
            self.text_calls = 0

        def encode_images(self, batch):
            return torch.cat([batch, torch.ones_like(batch)], dim=1)

        def encode_texts(self, texts):
            self.text_calls += 1
            return torch.tensor([[float(len(t)), float(t.count("a"))] for t in texts])

    dual = Dual()
    score = _model_scorer(dual, Store())
    texts = ["a cat", "a cat", "two dogs sat", "a red banana"]
    true_, false_ = score(texts, np.array([1, 2, 3, 4])), score(texts, np.array([5, 5, 6, 7]))
    assert dual.text_calls == 1
    np.testing.assert_array_equal(true_, [5 * 1 + 2, 5 * 2 + 2, 12 * 3 + 1, 12 * 4 + 4])
    np.testing.assert_array_equal(false_, [5 * 5 + 2, 5 * 5 + 2, 12 * 6 + 1, 12 * 7 + 4])
    np.testing.assert_array_equal(score(["no"], np.array([2])), [2 * 2 + 0])
    assert dual.text_calls == 2


def test_table4_reads_figure8s_per_image_scores_instead_of_scoring_again():
    """Given the per-image scores Figure 8 wrote (x100), Table 4's cells are the ones it computes itself (BLEU-4,
    a corpus score, still computed); a file that lacks an image or a metric, or repeats an image, is refused."""
    from itmbench.papers.bison import captioning

    generated = pd.DataFrame({"image_id": [1, 2, 3], "caption": ["a red circle", "a red circle", "a purple hexagon"]})
    metrics = ["bleu4", "cider_d", "tuple_f1"]
    own = captioning.metric_cells(generated, TEST, metrics, n_boot=50, seed=0, confidence=0.95)
    per_image = captioning.per_image_scores(generated, TEST, ["cider_d", "tuple_f1"])
    shuffled = per_image.iloc[[2, 0, 1]].assign(model="coca")  # in another order: aligned by image id
    read = captioning.metric_cells(generated, TEST, metrics, n_boot=50, seed=0, confidence=0.95, per_image=shuffled)
    for metric in metrics:
        assert read[metric] == pytest.approx(own[metric], rel=1e-12)
    extra = pd.concat([per_image, per_image.iloc[:1].assign(image_id=9)])
    for bad, named in (
        (per_image.iloc[:2], "image 3 is missing"),
        (extra, "image 9 is not one the captioner captioned"),
        (per_image.drop(columns="tuple_f1"), "no column 'tuple_f1'"),
        (pd.concat([per_image, per_image.iloc[:1]]), "image 1 has two rows"),
    ):
        with pytest.raises(InputError, match=f"scores.parquet: {named}"):
            captioning.metric_cells(
                generated, TEST, metrics, 50, 0, 0.95, per_image=bad, per_image_source="scores.parquet"
            )
