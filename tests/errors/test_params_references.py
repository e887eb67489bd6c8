"""Params that a dry run used to accept (issue 34): a negative seed, a report entry or CxC encoder naming no
model, a scored split without ratings, two benchmark splits from one world split, a registry overlay that
does not exist, and a model whose `init` chain loops. Each is refused by `check_config` (or the schema) in
one line naming the key and what was expected; `snakemake -n` stops on them before planning
(tests/errors/test_params_contract.py)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path

import pytest

from itmbench.errors import InputError
from itmbench.params import check_config, check_schema, init_cycle, load_yaml, validated_section

REPO = Path(__file__).resolve().parents[2]


def _params() -> dict:
    return load_yaml(REPO / "params.yaml")


def _set(path: str, value) -> Callable[[dict], None]:
    def edit(config: dict) -> None:
        *parents, last = path.split(".")
        node = config
        for part in parents:
            node = node[part]
        node[last] = value

    return edit


def _cycle(config: dict) -> None:
    config["models"]["clip"]["init"] = "clip_coco"  # clip_coco starts from clip


CASES = {
    "report-row": (_set("report.rows.cxc.nosuch", "X"), r"params report\.rows\.cxc\.nosuch: 'nosuch' is no model"),
    "cxc-encoder": (_set("report.cxc.encoders.BoW", "nosuch"), r"report\.cxc\.encoders\.BoW: 'nosuch' is no model"),
    "paired": (_set("report.bivlc_paired", [["clip", "nosuch"]]), r"report\.bivlc_paired\[0\]\[1\]: 'nosuch' is no"),
    "eccv-paired": (_set("report.eccv_paired", [["nosuch", "vse"]]), r"report\.eccv_paired\[0\]\[0\]: 'nosuch' is no"),
    "cxc-paired": (_set("report.cxc_paired", [["de_i2t", "nosuch"]]), r"report\.cxc_paired\[0\]\[1\]: 'nosuch' is no"),
    "figure4": (_set("report.bivlc_figure4.models", ["nosuch"]), r"report\.bivlc_figure4\.models\[0\]: 'nosuch'"),
    "table1": (_set("report.bison_table1_model", "nosuch"), r"report\.bison_table1_model: 'nosuch' is no model"),
    "score-split": (_set("cxc.score_split", "train"), r"params cxc: score_split='train' is not in splits=\['val', 'te"),
    "mcic-splits": (
        _set("mcic.splits", {"dev": "test", "test": "test"}),
        r"params mcic: splits: dev and test are both 'test'; expected a different value for each",
    ),
    "registry": (_set("registry", "no/such/registry.yaml"), r"params registry: no/such/registry\.yaml: no such file"),
    "init-missing": (_set("models.clip_coco.init", "nosuch"), r"params models\.clip_coco\.init: 'nosuch' is no model"),
    "init-cycle": (_cycle, r"params models: the init chain clip -> clip_coco -> clip loops"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_check_config_refuses_a_name_or_split_that_points_at_nothing(case):
    edit, named = CASES[case]
    config = _params()
    check_config(copy.deepcopy(config))  # the shipped params pass
    edit(config)
    with pytest.raises(InputError, match=named) as exc:
        check_config(config)
    assert "\n" not in str(exc.value)


def test_a_coco_model_may_fill_a_report_row():
    config = _params()
    config["report"]["rows"]["eccv"]["vit_l_14"] = "CLIP ViT-L/14"  # coco.models only
    check_config(config)


def test_init_cycle_names_the_loop_and_only_the_loop():
    models = {"a": {"init": "b"}, "b": {"init": "c"}, "c": {"init": "b"}, "d": {}}
    assert init_cycle(models, "a") == ["b", "c", "b"]
    assert init_cycle(models, "d") is None
    assert init_cycle({"a": {"init": "a"}}, "a") == ["a", "a"]


def test_a_negative_seed_is_refused_by_the_schema_in_one_line():
    with pytest.raises(InputError, match=r"score params: seed: -1 is less than the minimum of 0"):
        validated_section("score", {"seed": -1})
    config = _params()
    config["score"]["seed"] = -1
    with pytest.raises(InputError, match=r"^params: score\.seed: -1 is less than the minimum of 0$"):
        check_schema(config)
    check_schema(_params())
