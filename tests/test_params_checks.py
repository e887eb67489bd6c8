"""One check per rule (issue 35.3): the config classes of params sections (bivlc, sugarcrepe, bison, retrieval,
eccv, mcic, cxc, train, recognizer, sdxl, filter_rates) do not repeat the schema's ranges, enums and x-constraints; the
schema checks them when a section is read (`make_config`), and its enums are the code's names. A class keeps only
what the schema cannot state (the recognizer's image size, a multiple of eight)."""

from __future__ import annotations

import pytest

from itmbench.errors import InputError
from itmbench.negatives.captions import SUBSETS as CAPTION_SUBSETS
from itmbench.negatives.filter_rates import FilterRateConfig
from itmbench.negatives.recognizer import RecognizerConfig
from itmbench.negatives.sdxl import SDXLConfig
from itmbench.papers.bison.config import BisonConfig
from itmbench.papers.bivlc.config import GENERATOR_KEYS, BiVLCConfig
from itmbench.papers.cxc.config import CAPTION_SCORER_NAMES, SPLIT_CODES, CxcConfig
from itmbench.papers.eccv.config import ANNOTATOR_SOURCES, ANSWERS, WORLD_ANNOTATORS, EccvConfig
from itmbench.papers.mcic.config import BLEU_SMOOTHINGS, DECOY_POOLS, N_OPTIONS, OPTION_ORDERS, PV_LOSSES, MCICConfig
from itmbench.papers.retrieval.config import RetrievalConfig
from itmbench.papers.sugarcrepe.config import SugarCrepeConfig
from itmbench.papers.sugarcrepe.released import SUBSETS as RELEASED_SUBSETS
from itmbench.params import make_config, section_schema
from itmbench.train.config import SELECT_ON, TrainConfig
from itmbench.world.generate import SPLITS


def _enum(section: str, key: str) -> list:
    node = section_schema(section)["properties"][key]
    return node["items"]["enum"] if node.get("type") == "array" else node["enum"]


def test_the_schema_enums_are_the_codes_names():
    assert _enum("bivlc", "subsets") == list(RELEASED_SUBSETS) == list(CAPTION_SUBSETS)
    assert _enum("sugarcrepe", "subsets") == list(CAPTION_SUBSETS)
    assert sorted(_enum("bivlc", "generator")) == sorted(GENERATOR_KEYS)
    assert _enum("eccv", "annotators") == list(WORLD_ANNOTATORS)
    assert _enum("eccv", "annotator_source") == list(ANNOTATOR_SOURCES)
    assert _enum("eccv", "positive_answers") == list(ANSWERS)
    assert [section_schema("eccv")["properties"][f"answer_probs_{kind}"]["minItems"] for kind in ("fit", "worse")] == [
        len(ANSWERS)
    ] * 2
    assert _enum("cxc", "splits") == list(SPLIT_CODES) == list(SPLITS)
    assert _enum("cxc", "caption_scorers") == list(CAPTION_SCORER_NAMES)
    mcic = section_schema("mcic")["properties"]
    assert [_enum("mcic", k) for k in ("pv_loss", "decoy_pool", "bleu_smoothing", "option_order")] == [
        list(PV_LOSSES),
        list(DECOY_POOLS),
        list(BLEU_SMOOTHINGS),
        list(OPTION_ORDERS),
    ]
    assert mcic["n_decoys"]["minimum"] == mcic["n_decoys"]["maximum"] == N_OPTIONS - 1
    assert section_schema("recognizer")["properties"]["channels"]["minItems"] == 4
    assert _enum("cxc", "score_split") == list(SPLITS)
    assert _enum("train", "select_on") == list(SELECT_ON)
    assert _enum("train", "negative_subsets") == list(CAPTION_SUBSETS)
    for section in ("bivlc", "sugarcrepe", "bison", "retrieval", "eccv", "recognizer"):
        assert _enum(section, "split") == list(SPLITS), section


@pytest.mark.parametrize(
    ("cls", "values", "message"),
    [
        (BiVLCConfig, {"p_extra_object": 1.5}, r"bivlc params: p_extra_object: 1.5 is greater than the maximum of 1"),
        (BiVLCConfig, {"subsets": ["swap_rel"]}, r"bivlc params: subsets.0: 'swap_rel' is not one of"),
        (BiVLCConfig, {"subsets": []}, r"bivlc params: subsets: \[\] should be non-empty"),
        (BiVLCConfig, {"generator": "sdxl"}, r"bivlc params: generator: 'sdxl' is not one of \['render', 'diff"),
        (BiVLCConfig, {"n_candidates": 0}, r"bivlc params: n_candidates: 0 is less than the minimum of 1"),
        (BiVLCConfig, {"render_noise": -1.0}, r"bivlc params: render_noise: -1.0 is less than the minimum of 0"),
        (BiVLCConfig, {"relation_margin": -0.1}, r"bivlc params: relation_margin: -0.1 is less than the minimum of 0"),
        (SugarCrepeConfig, {"subsets": ["a", "a"]}, r"sugarcrepe params: subsets.0: 'a' is not one of"),
        (SugarCrepeConfig, {"id_offset": 0}, r"sugarcrepe params: id_offset: 0 is less than the minimum of 1"),
        (BisonConfig, {"annotator_error": 1.5}, r"bison params: annotator_error: 1.5 is greater than the maximum of 1"),
        (BisonConfig, {"pairing": "all"}, r"bison params: pairing: 'all' is not one of \['both', 'query'\]"),
        (BisonConfig, {"fasttext_min_n": 5, "fasttext_max_n": 3}, r"bison params: fasttext_min_n=5 > fasttext_max_n=3"),
        (
            SDXLConfig,
            {"dtype": "int8"},
            r"sdxl params: dtype: 'int8' is not one of \['float16', 'bfloat16', 'float32'\]",
        ),
        (SDXLConfig, {"prompts_per_batch": 0}, r"sdxl params: prompts_per_batch: 0 is less than the minimum of 1"),
        (FilterRateConfig, {"sample": 0}, r"filter_rates params: sample: 0 is less than the minimum of 1"),
        (EccvConfig, {"image_query_fraction": 0}, r"eccv params: image_query_fraction: 0 is less than or equal to"),
        (
            EccvConfig,
            {"annotators": ["exact", "exact"]},
            r"eccv params: annotators: \['exact', 'exact'\] has non-unique",
        ),
        (EccvConfig, {"annotator_source": "people"}, r"eccv params: annotator_source: 'people' is not one of"),
        (
            EccvConfig,
            {"answer_probs_fit": [0.5, 0.5, 0.5, 0.5]},
            r"eccv params: answer_probs_fit=\[0.5, 0.5, 0.5, 0.5\] sums",
        ),
        (
            EccvConfig,
            {"answer_probs_fit": [1.0, 0.0, 0.0]},
            r"eccv params: answer_probs_fit: \[1.0, 0.0, 0.0\] is too short",
        ),
        (EccvConfig, {"positive_answers": ["YES"]}, r"eccv params: positive_answers.0: 'YES' is not one of"),
        (EccvConfig, {"pm_vector": "bag"}, r"eccv params: pm_vector: 'bag' is not one of \['set', 'multiset'\]"),
        (EccvConfig, {"pm_zeta": -1}, r"eccv params: pm_zeta: -1 is less than the minimum of 0"),
        (MCICConfig, {"n_decoys": 3}, r"mcic params: n_decoys: 3 is less than the minimum of 4"),
        (MCICConfig, {"neighbourhood": 4, "n_decoys": 4}, None),
        (MCICConfig, {"pv_grid": {"vector_size": [8]}}, r"mcic params: pv_grid: 'epochs' is a required property"),
        (MCICConfig, {"lambda_grid": [0.5, 0.5]}, r"mcic params: lambda_grid: \[0.5, 0.5\] has non-unique elements"),
        (MCICConfig, {"pv_loss": "softmax"}, r"mcic params: pv_loss: 'softmax' is not one of \['hs', 'negative'\]"),
        (CxcConfig, {"splits": ["val"], "score_split": "test"}, r"cxc params: score_split='test' is not in splits"),
        (
            CxcConfig,
            {"caption_scorers": ["bow", "bow"]},
            r"cxc params: caption_scorers: \['bow', 'bow'\] has non-unique",
        ),
        (CxcConfig, {"cocaption_fraction": 1.0}, r"cxc params: cocaption_fraction: 1.0 is greater than or equal to"),
        (
            CxcConfig,
            {"sits_partial_max": 4.0, "sits_fit_base": 3.0},
            r"cxc params: sits_partial_max=4.0 > sits_fit_base",
        ),
        (RecognizerConfig, {"channels": [8, 8, 8]}, r"recognizer params: channels: \[8, 8, 8\] is too short"),
        (RecognizerConfig, {"p_lowres": 2}, r"recognizer params: p_lowres: 2 is greater than the maximum of 1"),
        (TrainConfig, {"batch_size": 1}, r"train params: batch_size: 1 is less than the minimum of 2"),
        (TrainConfig, {"lr": 0}, r"train params: lr: 0 is less than or equal to the minimum of 0"),
        (TrainConfig, {"trohn_img_fraction": 0}, r"train params: trohn_img_fraction: 0 is less than or equal to"),
        (TrainConfig, {"select_on": "loss"}, r"train params: select_on: 'loss' is not one of"),
        (
            TrainConfig,
            {"negative_subsets": ["add_att"], "hard_negatives_per_sample": 2},
            r"train params: hard_negatives_per_sample=2 > 1 entries of negative_subsets",
        ),
        (RetrievalConfig, {"split": "dev"}, r"retrieval params: split: 'dev' is not one of \['train', 'val', 'test'\]"),
    ],
)
def test_the_schema_refuses_what_the_classes_no_longer_check(cls, values, message):
    if message is None:  # a value at the bound is accepted
        make_config(cls, values)
        return
    with pytest.raises(InputError, match=message):  # the schema's complaint (an InputError)
        make_config(cls, values)


def test_a_class_keeps_what_the_schema_cannot_state():
    with pytest.raises(ValueError, match=r"recognizer params: image_size 12; expected a multiple of 8"):
        make_config(RecognizerConfig, {"image_size": 12})
