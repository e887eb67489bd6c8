"""The params schema is the contract (issue 18): what JSON Schema cannot state is checked too. NaN and
infinity at any depth, the cross-field constraints (the schema's `x-constraints`), a key repeated in a YAML
file, and the shipped YAML files still pass; `snakemake -n` refuses a bad params file before planning."""

from __future__ import annotations

import copy
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from unit_world import unit_world

from itmbench import params
from itmbench.errors import InputError, reading
from itmbench.models.spec import model_spec
from itmbench.papers.bison.config import BisonConfig
from itmbench.papers.cxc.coco import CxcCocoConfig
from itmbench.papers.cxc.config import CxcConfig
from itmbench.papers.eccv.config import EccvConfig
from itmbench.params import (
    check_config,
    check_section,
    constraints,
    load_yaml,
    make_config,
    section_defaults,
    validated_section,
)
from itmbench.train.config import TrainConfig
from itmbench.world.generate import WorldConfig

REPO = Path(__file__).resolve().parents[2]
NAN, INF = math.nan, math.inf


def _params() -> dict:
    return load_yaml(REPO / "params.yaml")


# -- NaN and infinity ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "build,key",
    [
        (lambda: unit_world({"noise": NAN}), "noise"),
        (lambda: unit_world({"p_colour": -INF}), "p_colour"),
        (lambda: unit_world({"caption_kinds": {"single": INF, "relation": 1}}), "caption_kinds.single"),
        (lambda: make_config(EccvConfig, {"answer_probs_fit": [0.8, NAN, 0.04, 0.01]}), "answer_probs_fit[1]"),
        (lambda: make_config(CxcConfig, {"threshold_sts": NAN}), "threshold_sts"),
        (lambda: make_config(CxcCocoConfig, {"threshold_sits": INF}), "threshold_sits"),
        (lambda: make_config(TrainConfig, {"generator": {"p_extra_object": NAN}}), "generator.p_extra_object"),
        (lambda: model_spec("m", {"family": "ffnn", "upstream": "clip", "options": {"lr": NAN}}), "options.lr"),
        (lambda: validated_section("score", {"confidence": NAN}), "confidence"),
    ],
    ids=["top", "negative-inf", "nested-mapping", "in-a-list", "cxc", "coco-cxc", "free-form-object", "model", "score"],
)
def test_nan_and_infinity_are_refused_naming_the_dotted_key(build, key):
    with pytest.raises(InputError, match="is not a finite number") as exc:
        build()
    assert f": {key}: " in str(exc.value)


def test_nan_deep_in_params_yaml_is_refused_by_check_config():
    config = _params()
    config["models"]["clip"]["train"]["lr"] = NAN
    with pytest.raises(InputError, match=r"params: models\.clip\.train\.lr: nan is not a finite number"):
        check_config(config)


# -- cross-field constraints ---------------------------------------------------------------------------------

# One violation per constraint, given to check_section directly (the schema and a class may refuse it first)
VIOLATIONS = {
    ("world", "min_objects"): {"min_objects": 3, "max_objects": 2},
    ("world", "caption_kinds"): {"caption_kinds": {"single": 0, "relation": 0.0, "pair": 0, "count": 0}},
    ("bison", "fasttext_min_n"): {"fasttext_min_n": 5, "fasttext_max_n": 4},
    ("mcic", "n_decoys"): {"n_decoys": 4, "neighbourhood": 3},
    ("mcic", "splits"): {"splits": {"dev": "test", "test": "test"}},
    ("cxc", "score_split"): {"score_split": "train", "splits": ["val", "test"]},
    ("cxc", "sits_partial_max"): {"sits_partial_max": 4.5, "sits_fit_base": 4.0},
    ("eccv", "answer_probs_fit"): {"answer_probs_fit": [0.5, 0.3, 0.1, 0.05]},
    ("eccv", "answer_probs_one_off"): {"answer_probs_one_off": [0.5, 0.5, 0.5, 0.5]},
    ("eccv", "answer_probs_worse"): {"answer_probs_worse": [0.0, 0.0, 0.0, 0.0]},
    ("train", "hard_negatives_per_sample"): {"hard_negatives_per_sample": 3, "negative_subsets": ["swap_obj"]},
    ("aro", "coco_order_split"): {"coco_order_split": "val", "flickr30k_order_split": "val"},
}
RULES = [(section, rule) for section, rules in constraints().items() for rule in rules]


@pytest.mark.parametrize("section,rule", RULES, ids=[f"{s}:{r.keys[0]}" for s, r in RULES])
def test_each_constraint_refuses_its_violation_naming_the_keys(section, rule):
    values = {**section_defaults(section), **VIOLATIONS[(section, rule.keys[0])]}
    with pytest.raises(InputError) as exc:
        check_section(section, values)
    assert str(exc.value).startswith(f"{section} params: {rule.keys[0]}")
    for key in rule.keys:
        assert key in str(exc.value)
    check_section(section, section_defaults(section))  # the defaults satisfy every constraint


def test_every_constraint_has_a_violation_case_and_names_schema_keys():
    assert {(section, rule.keys[0]) for section, rule in RULES} == set(VIOLATIONS)
    for section, rule in RULES:
        properties = params.section_schema(section)["properties"]
        assert set(rule.keys) <= set(properties), (section, rule.keys)


@pytest.mark.parametrize(
    "cls,values,named",
    [
        (WorldConfig, {"min_objects": 4, "max_objects": 3}, "min_objects=4 > max_objects=3"),
        (WorldConfig, {"caption_kinds": {"single": 0, "relation": 0, "pair": 0, "count": 0}}, "every weight is 0"),
        (BisonConfig, {"fasttext_min_n": 6, "fasttext_max_n": 3}, "fasttext_min_n"),  # the class's message wins
        (CxcConfig, {"sits_partial_max": 4.9, "sits_fit_base": 4.5}, "sits_partial_max=4.9 > sits_fit_base=4.5"),
        (EccvConfig, {"answer_probs_worse": [0.5, 0.5, 0.5, 0.5]}, "answer_probs_worse"),
        (CxcConfig, {"threshold_sis": 5.01}, "threshold_sis: 5.01 is greater than the maximum of 5"),
        (CxcConfig, {"threshold_sts": -0.5}, "threshold_sts: -0.5 is less than the minimum of 0"),
        (CxcCocoConfig, {"threshold_sits": 6}, "threshold_sits: 6 is greater than the maximum of 5"),
        (TrainConfig, {"beta1": 1.0}, "beta1"),
    ],
    ids=[
        "world-objects",
        "world-weights",
        "bison-ngrams",
        "cxc-sits",
        "eccv-probs",
        "cxc-threshold-high",
        "cxc-threshold-low",
        "coco-cxc-threshold",
        "train-beta",
    ],
)
def test_make_config_refuses_what_the_schema_cannot_say(cls, values, named):
    with pytest.raises(ValueError) as exc:
        make_config(cls, values)
    assert named in str(exc.value)


def test_score_ks_must_be_a_non_empty_list_of_distinct_positive_k():
    for ks, named in (([], "should be non-empty"), ([1, 1], "non-unique"), ([0, 5], "less than the minimum of 1")):
        with pytest.raises(InputError, match="ks") as exc:
            validated_section("score", {"ks": ks})
        assert named in str(exc.value)
    assert validated_section("score", {"ks": [5]})["ks"] == [5]


def test_check_config_validates_the_nested_sections():
    config = _params()
    config["coco"]["llm"]["temperature"] = 0
    with pytest.raises(InputError, match=r"params coco\.llm: temperature"):
        check_config(config)
    config = _params()
    config["models"]["clip"]["train"]["hard_negatives_per_sample"] = 9
    with pytest.raises(InputError, match=r"params models\.clip\.train \(over `train`\): hard_negatives_per_sample"):
        check_config(config)
    config = _params()
    config["world"]["min_objects"] = 4
    config["world"]["max_objects"] = 2
    with pytest.raises(InputError, match="params world: min_objects=4 > max_objects=2"):
        check_config(config)


def test_coco_only_models_replaces_the_merged_models_and_a_name_not_among_them_is_refused():
    """A config file's `coco.models` entry is merged into params.yaml's: `coco.only_models` keeps that one alone."""
    config = _params()
    config["coco"]["models"]["mine"] = {"family": "open_clip", "arch": "itm-clip-tiny", "pretrained": "w.pt"}
    assert set(params.coco_model_specs(config)) == {"mine", "random", "vit_b_32", "vit_b_16", "vit_l_14"} | {
        "clip_coco",
        "clip_trohn_text",
        "clip_trohn_img",
    }
    config["coco"]["only_models"] = ["mine", "random"]
    assert params.coco_model_specs(config) == {m: config["coco"]["models"][m] for m in ("mine", "random")}
    check_config(config)
    config["coco"]["only_models"] = ["mine", "yours"]
    with pytest.raises(InputError, match=r"params coco\.only_models: \['yours'\] not in coco\.models"):
        check_config(config)


# -- YAML ----------------------------------------------------------------------------------------------------


def test_a_repeated_yaml_key_names_the_file_the_key_and_both_lines(tmp_path):
    path = tmp_path / "my.yaml"
    path.write_text("world:\n  seed: 0\n  n_val: 250\n  n_test: 500\n  n_val: 300\n", encoding="utf-8")
    with pytest.raises(InputError) as exc:
        load_yaml(path)
    message = str(exc.value)
    assert str(path) in message and "'n_val'" in message and "line 3" in message and "line 5" in message
    assert yaml.safe_load(path.read_text()) == {"world": {"seed": 0, "n_val": 300, "n_test": 500}}  # PyYAML's


def test_repeated_top_level_and_flow_keys_are_refused(tmp_path):
    for text in ("score: {}\nworld: {}\nscore: {}\n", "bison: {seed: 0, split: test, seed: 1}\n"):
        path = tmp_path / "p.yaml"
        path.write_text(text, encoding="utf-8")
        with pytest.raises(InputError, match="appears twice"):
            load_yaml(path)


def test_merge_keys_may_be_overridden(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("base: &b {seed: 0, split: test}\nbison:\n  <<: *b\n  seed: 1\n", encoding="utf-8")
    assert load_yaml(path)["bison"] == {"seed": 1, "split": "test"}


def test_yaml_that_is_not_utf8_names_the_file_and_the_offset(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_bytes(b"world:\n  seed: 0 # caf\xe9\n")
    with pytest.raises(yaml.YAMLError) as exc:
        load_yaml(path)
    assert str(path) in str(exc.value) and "position 22" in str(exc.value)


SHIPPED_YAML = sorted(
    {p for pattern in ("*.yaml", "*.yml") for p in REPO.glob(pattern)}
    | {p for folder in ("workflow", "src") for pattern in ("*.yaml", "*.yml") for p in (REPO / folder).rglob(pattern)}
)


@pytest.mark.parametrize("path", SHIPPED_YAML, ids=lambda p: str(p.relative_to(REPO)))
def test_every_shipped_yaml_file_has_no_repeated_key(path):
    assert load_yaml(path) is not None


def test_the_shipped_params_validate_with_and_without_defaults():
    from snakemake.utils import validate

    raw = _params()
    check_config(raw)
    filled = copy.deepcopy(raw)
    validate(filled, schema=str(REPO / "workflow/schemas/params.schema.yaml"), set_default=True)
    check_config(filled)
    for section in constraints():
        check_section(section, section_defaults(section))


# -- the reading sites name the file -------------------------------------------------------------------------


def test_not_utf8_names_the_file_and_the_offset_in_the_file(tmp_path):
    """The offset is the file's, not the decoded chunk's (a text stream decodes in chunks of some KiB)."""
    path = tmp_path / "t.csv"
    path.write_bytes(b"a,b\n" + b"x,1\n" * 5000 + b"caf\xe9,2\n")
    offset = 4 + 4 * 5000 + 3
    with pytest.raises(InputError, match=rf"{path}: not UTF-8 text: byte 0xE9 at offset {offset}"):
        with reading(path), open(path, encoding="utf-8") as handle:
            for _ in handle:
                pass


# -- snakemake -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "edit,extra,named",
    [
        (
            lambda text: text.replace("  n_val: 250\n", "  n_val: 250\n  n_val: 300\n", 1),
            [],
            "key 'n_val' appears twice",
        ),
        (
            lambda text: text.replace("  noise: 4.0\n", "  noise: .nan\n", 1),
            [],
            "world.noise: nan is not a finite number",
        ),
        (
            lambda text: text.replace("  n_boot: 1000\n  seed: 0\n", "  n_boot: 1000\n  seed: -1\n", 1),
            [],
            "params: score.seed: -1 is less than the minimum of 0",
        ),
        (
            lambda text: text.replace("    train: {epochs: 10}", "    init: clip_coco\n    train: {epochs: 10}", 1),
            [],
            "params models: the init chain clip -> clip_coco -> clip loops",
        ),
        (
            lambda text: text + "\n",
            ["--config", "registry=missing.yaml"],
            "params registry: missing.yaml: no such file",
        ),
    ],
    ids=["duplicate-key", "nan", "negative-seed", "init-cycle", "missing-registry"],
)
def test_snakemake_refuses_a_bad_params_file_before_planning(edit, extra, named, tmp_path):
    if shutil.which("snakemake") is None:
        pytest.skip("snakemake is not installed")
    text = (REPO / "params.yaml").read_text(encoding="utf-8")
    changed = edit(text)
    assert changed != text
    (tmp_path / "params.yaml").write_text(changed, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(tmp_path), "-n", "-q", *extra],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode != 0
    assert named in done.stdout + done.stderr, done.stderr[-2000:]
