"""One home per default (issue 35.3): params.yaml states the default of every value it holds; the schema
states types, bounds and descriptions, and a default only where params.yaml cannot (a model entry's fields,
`$defs`, the keys params.yaml leaves out). The package reads both (`itmbench.params.with_params_defaults`)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

from itmbench import params

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "workflow" / "schemas" / "params.schema.yaml"


def stated_twice(schema: Mapping[str, Any], values: Mapping[str, Any], where: str = "") -> Iterator[str]:
    """The dotted keys whose default the schema states although params.yaml states their value (a section,
    a property whose default is `{}`, is walked into rather than counted)."""
    properties = schema.get("properties", {})
    for key, value in values.items():
        node = properties.get(key)
        if not isinstance(node, Mapping) or "default" not in node:
            continue
        path = f"{where}.{key}" if where else key
        if node["default"] == {} and isinstance(value, Mapping):
            yield from stated_twice(node, value, path)
        else:
            yield path


def _files(root: Path) -> tuple[dict, dict]:
    return (
        yaml.safe_load((root / "workflow" / "schemas" / "params.schema.yaml").read_text()),
        yaml.safe_load((root / "params.yaml").read_text()),
    )


def test_no_default_is_stated_twice():
    """A value params.yaml states has its default there alone; the schema repeats none. (A test that wants
    another value states it: the unit tests' world grammar is tests/unit_world.py's.)"""
    schema, values = _files(REPO)
    twice = sorted(stated_twice(schema, values))
    for path, definition in params.NESTED.items():  # a `$defs` definition whose values a section of params states
        section, _, name = definition.partition(".")
        if section == "$defs":
            properties = schema["$defs"][name]["properties"]
            stated = dict(params._entries(values, path)).get(path, {})
            twice += [f"{definition}.{key} ({path})" for key in stated if "default" in properties.get(key, {})]
    assert not twice, f"defaults both in params.yaml and in the schema (keep them in params.yaml): {twice}"


def test_a_definition_takes_the_values_its_section_states():
    """`$defs.llm` and `$defs.sdxl` (a config class's section: LLMConfig, SDXLConfig) take params.yaml's
    `coco.llm` and `coco.sdxl`; the keys those leave out keep the schema's default."""
    values = yaml.safe_load((REPO / "params.yaml").read_text())
    for path, definition in params.NESTED.items():
        if definition.startswith("$defs."):
            filled = params.section_defaults(definition)
            stated = dict(params._entries(values, path)).get(path)
            assert stated and all(filled[key] == value for key, value in stated.items()), path
    assert "prompt_suffix" in params.section_defaults("$defs.sdxl")  # stated in the schema alone


def test_the_package_takes_params_yaml_defaults():
    """The package ships params.yaml (a link, as the schema) and fills a section's missing keys from it: a
    section given alone (as a CLI command or a notebook gives it) gets the run's values, nested ones too."""
    assert params.PARAMS_FILE.resolve() == (REPO / "params.yaml").resolve()
    assert '"params.yaml"' in (REPO / "pyproject.toml").read_text()  # package data
    values = yaml.safe_load((REPO / "params.yaml").read_text())
    for section, stated in values.items():
        if not isinstance(stated, Mapping) or section == "models":
            continue
        filled = params.section_defaults(section)
        for key, value in stated.items():
            if not isinstance(value, Mapping):  # nested sections: some are `$defs` or model entries (below)
                assert filled[key] == value, f"{section}.{key}"
    assert params.section_defaults("world")["n_test"] == values["world"]["n_test"]
    assert params.section_defaults("world")["caption_kinds"] == values["world"]["caption_kinds"]
    assert params.section_defaults("report")["rows"] == values["report"]["rows"]
    assert params.section_defaults("cross_scorers")["shortlist"] == values["cross_scorers"]["shortlist"]


def test_the_schema_file_alone_has_no_default_for_a_stated_value():
    """The effective schema is the file's with params.yaml's defaults added, and only those."""
    schema, values = _files(REPO)
    effective = params.with_params_defaults(yaml.safe_load(SCHEMA.read_text()), values)
    assert effective == params.schema()
    assert "default" not in schema["properties"]["train"]["properties"]["epochs"]
    assert effective["properties"]["train"]["properties"]["epochs"]["default"] == values["train"]["epochs"]
    # required keys get none (models), nor do the keys of a model entry
    assert "default" not in effective["properties"]["models"]
    assert effective["properties"]["models"]["additionalProperties"]["properties"]["dim"]["default"] == 64
