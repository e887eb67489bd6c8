"""params.schema.yaml is the one statement of every config's fields, defaults and descriptions."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml
from unit_world import unit_world

from itmbench import params
from itmbench.models.spec import ModelSpec, model_spec
from itmbench.negatives.diffusion import DiffusionConfig
from itmbench.negatives.filter_rates import FilterRateConfig
from itmbench.negatives.llm_captions import LLMConfig
from itmbench.negatives.recognizer import RecognizerConfig
from itmbench.negatives.sdxl import SDXLConfig
from itmbench.papers.aro.coco import AroCocoConfig
from itmbench.papers.aro.config import AroConfig
from itmbench.papers.bison.config import BisonCaptionersConfig, BisonCaptionMetricsConfig, BisonConfig
from itmbench.papers.bivlc.coco import BivlcCocoConfig
from itmbench.papers.bivlc.config import BiVLCConfig
from itmbench.papers.cxc.coco import CxcCocoConfig
from itmbench.papers.cxc.config import CxcConfig
from itmbench.papers.eccv.config import EccvConfig
from itmbench.papers.mcic.coco import McicCocoConfig
from itmbench.papers.mcic.config import MCICConfig
from itmbench.papers.retrieval.coco import RetrievalCocoConfig
from itmbench.papers.retrieval.config import RetrievalConfig
from itmbench.papers.sugarcrepe.coco import SugarCrepeCocoConfig
from itmbench.papers.sugarcrepe.config import SugarCrepeConfig
from itmbench.params import config_from_section, make_config, section_defaults, section_schema
from itmbench.sources.coco_benchmarks import NoConfig
from itmbench.train.config import TrainConfig
from itmbench.world.generate import WorldConfig

REPO = Path(__file__).resolve().parents[1]
CONFIGS = (
    BisonConfig,
    BisonCaptionMetricsConfig,
    BisonCaptionersConfig,
    MCICConfig,
    EccvConfig,
    CxcConfig,
    BiVLCConfig,
    SugarCrepeConfig,
    AroConfig,
    RetrievalConfig,
    FilterRateConfig,
    DiffusionConfig,
    RecognizerConfig,
    LLMConfig,
    SDXLConfig,
    WorldConfig,
    TrainConfig,
    McicCocoConfig,
    CxcCocoConfig,
    BivlcCocoConfig,
    RetrievalCocoConfig,
    SugarCrepeCocoConfig,
    AroCocoConfig,
)
NOT_PARAMETERS = {ModelSpec: {"name"}}  # the key of a model's entry, not one of its parameters


def _json(value):
    """Tuples as lists, as the schema states them."""
    if isinstance(value, (tuple, list)):
        return [_json(v) for v in value]
    if isinstance(value, dict):
        return {k: _json(v) for k, v in value.items()}
    return value


def _section_pairs():
    pairs = [(cls, cls.SECTION) for cls in CONFIGS]
    pairs += [(NoConfig, "coco_benchmarks.bison"), (NoConfig, "coco_benchmarks.eccv"), (ModelSpec, "models.*")]
    return pairs


def test_every_benchmarks_config_classes_are_checked_here():
    """Each registered benchmark's world config and coco config (a new paper's too) is among CONFIGS."""
    from itmbench.papers.registry import BENCHMARKS
    from itmbench.sources.coco_registry import COCO_BENCHMARKS

    classes = {getattr(entry.part("config"), entry.config_class) for entry in BENCHMARKS.values()}
    classes |= {c.config_class for c in COCO_BENCHMARKS.values()} - {NoConfig}
    assert classes - {WorldConfig} <= set(CONFIGS), classes - set(CONFIGS)


def test_every_schema_keyword_is_one_jsonschema_or_the_project_knows():
    """A description with an unquoted comma inside a flow mapping splits into junk keys: none is left."""
    known = {
        *("type", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "default", "description", "items"),
        *("enum", "properties", "additionalProperties", "required", "minItems", "maxItems", "minProperties", "$ref"),
        *("oneOf", "anyOf", "uniqueItems", "propertyNames", "const", "minLength", "pattern", "$defs", "$schema"),
        *("title", "x-constraints", "multipleOf", "patternProperties", "allOf", "not", "maxLength", "format"),
    }
    junk = []

    def walk(node, path):
        if isinstance(node, dict):
            if "type" in node or "description" in node:
                junk.extend(f"{path}: {k!r}" for k in node if k not in known)
            for k, v in node.items():
                walk(v, f"{path}.{k}")
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{path}[{i}]")

    walk(yaml.safe_load((REPO / "workflow/schemas/params.schema.yaml").read_text()), "")
    assert not junk, junk


def test_the_package_reads_the_workflow_schema():
    """One file: the package's schema is the workflow's (a link), whatever the install."""
    assert params.SCHEMA_FILE.resolve() == (REPO / "workflow" / "schemas" / "params.schema.yaml").resolve()
    assert params.schema() == params.with_params_defaults(  # with params.yaml's defaults (test_params_defaults)
        yaml.safe_load((REPO / "workflow" / "schemas" / "params.schema.yaml").read_text()),
        yaml.safe_load((REPO / "params.yaml").read_text()),
    )
    pyproject = (REPO / "pyproject.toml").read_text()
    assert '"params.schema.yaml"' in pyproject  # shipped as package data


@pytest.mark.parametrize(("cls", "section"), _section_pairs(), ids=lambda x: getattr(x, "__name__", x))
def test_fields_are_the_section_properties(cls, section):
    """Every field is a property of its section (or of the section it names in OUTSIDE), and back."""
    properties = section_schema(section).get("properties", {})
    outside = params.outside_fields(cls)
    fields = {f.name for f in dataclasses.fields(cls)} - NOT_PARAMETERS.get(cls, set())
    assert fields - set(outside) == set(properties), f"{cls.__name__} vs {section}"
    assert set(outside) <= fields
    for name, path in outside.items():
        where, _, key = path.rpartition(".")
        assert key in section_schema(where)["properties"], f"{cls.__name__}.{name}: {path}"
    for name, prop in properties.items():
        assert prop.get("description", "").strip(), f"{section}.{name} has no description"


@pytest.mark.parametrize(("cls", "section"), _section_pairs(), ids=lambda x: getattr(x, "__name__", x))
def test_an_empty_section_gives_the_schema_defaults(cls, section):
    """A config built from an empty section holds the schema's defaults (and nothing of its own)."""
    given = {"family": "open_clip"} if cls is ModelSpec else {}
    cfg = config_from_section(cls, section, given, given={"name": "m"} if cls is ModelSpec else None)
    properties = section_schema(section).get("properties", {})
    expected = {k: p["default"] for k, p in properties.items() if "default" in p}
    for name, path in params.outside_fields(cls).items():
        where, _, key = path.rpartition(".")
        expected[name] = section_schema(where)["properties"][key]["default"]
    got = {f.name: _json(getattr(cfg, f.name)) for f in dataclasses.fields(cls)}
    for name, value in expected.items():
        assert got[name] == value and type(got[name]) is type(value), f"{cls.__name__}.{name}"
    no_default = {f.name for f in dataclasses.fields(cls)} - set(expected) - NOT_PARAMETERS.get(cls, set())
    # Fields the schema gives no default: required (a model's family) or None/empty until an entry names them.
    assert all(got[n] in (None, {}) or n in given for n in no_default), no_default
    if cls is not ModelSpec:
        assert section_defaults(section) == {k: v for k, v in expected.items() if k in properties}


def test_no_config_class_states_a_default_the_schema_states():
    for cls, section in _section_pairs():
        properties = section_schema(section).get("properties", {})
        stated = {k for k, p in properties.items() if "default" in p} | set(params.outside_fields(cls))
        own = {
            f.name
            for f in dataclasses.fields(cls)
            if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
        }
        assert not own & stated, f"{cls.__name__} states {sorted(own & stated)} again"


def test_unknown_keys_name_the_section_the_keys_and_the_known_keys():
    with pytest.raises(ValueError, match=r"bison params: unknown keys \['seeed'\]; expected some of \[.*'seed'"):
        make_config(BisonConfig, {"seeed": 1})
    with pytest.raises(ValueError, match=r"coco_benchmarks\.mcic: unknown keys \['offset'\]; expected some of"):
        config_from_section(McicCocoConfig, "coco_benchmarks.mcic", {"offset": 1})
    with pytest.raises(ValueError, match=r"models\.m: unknown keys \['famly'\]"):
        model_spec("m", {"famly": "random"})
    with pytest.raises(ValueError, match=r"llm params: unknown keys \['temp'\]"):
        make_config(LLMConfig, temp=0.5)
    with pytest.raises(ValueError, match=r"expected some of \[.*'max_objects'.*'relation_margin'"):
        make_config(MCICConfig, {"margin": 0.1})  # the world's keys are known (passed from the world)


def test_values_are_checked_against_the_schema():
    with pytest.raises(ValueError, match=r"world params: n_test: 'x' is not of type 'integer'"):
        unit_world(n_test="x")
    with pytest.raises(ValueError, match=r"world params: n_test: 1 is less than the minimum of 2"):
        unit_world(n_test=1)
    with pytest.raises(ValueError, match=r"bison params: annotator_error: 1.5 is greater than the maximum of 1"):
        make_config(BisonConfig, annotator_error=1.5)
    with pytest.raises(ValueError, match=r"mcic params: relation_margin: -1 is less than the minimum of 0"):
        make_config(MCICConfig, relation_margin=-1)  # a world key: checked against the world's schema
    with pytest.raises(ValueError, match=r"models\.m: 'family' is a required property"):
        model_spec("m", {})


def test_lists_become_tuples_and_nested_defaults_are_filled():
    cfg = make_config(CxcConfig, {"splits": ["test"], "score_split": "test"})
    assert cfg.splits == ("test",) and isinstance(cfg.splits, tuple)
    eccv = make_config(EccvConfig, answer_probs_fit=[0.7, 0.2, 0.05, 0.05])
    assert eccv.answer_probs_fit == (0.7, 0.2, 0.05, 0.05) and isinstance(eccv.annotators, tuple)
    assert isinstance(make_config(DiffusionConfig).block_out_channels, tuple)
    assert make_config(MCICConfig).splits == {"dev": "val", "test": "test"}  # a dict field stays a dict
    # A tuple given in Python is accepted (the schema sees it as a list).
    assert make_config(TrainConfig, negative_subsets=("add_att",)).negative_subsets == ("add_att",)
    # Nested objects get their defaults as Snakemake's validate(set_default=True) fills them.
    shortlist = section_defaults("cross_scorers")["shortlist"]
    assert shortlist == {"model": "clip", "k": 16}  # params.yaml's
    assert section_defaults("cross_scorers")["shortlist"] is not section_defaults("cross_scorers")["shortlist"]


def test_defaults_are_copies():
    """A config's mutable default is its own: changing it changes neither the schema nor another config."""
    a = unit_world()
    a.caption_kinds["single"] = 99.0
    assert unit_world().caption_kinds["single"] == 0.2
    assert params.schema()["properties"]["world"]["properties"]["caption_kinds"]["default"]["single"] == 0.01


def test_params_yaml_validates_against_the_schema_with_the_same_defaults():
    """params.yaml's sections build every config; where params.yaml is silent the schema's default holds."""
    values = yaml.safe_load((REPO / "params.yaml").read_text())
    for cls in (
        BisonConfig,
        MCICConfig,
        EccvConfig,
        CxcConfig,
        BiVLCConfig,
        SugarCrepeConfig,
        WorldConfig,
        TrainConfig,
    ):
        section = values.get(cls.SECTION, {})
        cfg = make_config(cls, section)
        for key, value in section.items():
            assert _json(getattr(cfg, key)) == value, f"{cls.SECTION}.{key}"


def test_an_unknown_section_is_named():
    with pytest.raises(ValueError, match=r"no section 'bisn'"):
        section_schema("bisn")
    with pytest.raises(ValueError, match=r"no definition '\$defs.lm'"):
        section_schema("$defs.lm")


def test_a_models_benchmarks_are_registered_benchmarks_each_once():
    from itmbench.papers.plan import listed
    from itmbench.papers.registry import BENCHMARKS

    enum = section_schema("models.*")["properties"]["benchmarks"]["items"]["enum"]
    assert enum == sorted(BENCHMARKS)  # the schema names every registered benchmark, and only those
    spec = model_spec("m", {"family": "open_clip", "arch": "itm-clip-tiny", "benchmarks": ["cxc", "retrieval"]})
    assert spec.benchmarks == ("cxc", "retrieval")
    assert model_spec("m", {"family": "random"}).benchmarks is None  # no default: every benchmark it scores
    # []: scored nowhere (a model trained only to be another's `init`, as clip_rn for de_i2t_resnet)
    assert model_spec("m", {"family": "random", "benchmarks": []}).benchmarks == ()
    assert not any(listed({"benchmarks": []}, bench, "m") for bench in BENCHMARKS)
    bad = {
        "cxcx": r"models\.m: benchmarks\.0: 'cxcx' is not one of \['aro', 'bison', 'bivlc', 'cxc'",
        "twice": r"models\.m: benchmarks: \['cxc', 'cxc'\] has non-unique elements",
        "string": r"models\.m: benchmarks: 'cxc' is not of type 'array'",
    }
    values = {"cxcx": ["cxcx"], "twice": ["cxc", "cxc"], "string": "cxc"}
    for case, message in bad.items():
        with pytest.raises(ValueError, match=message):
            model_spec("m", {"family": "random", "benchmarks": values[case]})
