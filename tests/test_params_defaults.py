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

# Where the schema's default is not params.yaml's value: the package's default (a section given alone, as a
# test or a CLI command gives it) differs from the run's. Two values, not a copy; listed so that the list
# only shrinks (making them one changes what the tests' small worlds and reports are).
TWO_DEFAULTS = {
    "world.n_test",
    "world.min_objects",
    "world.max_objects",
    "world.relation_margin",
    "world.p_colour",
    "world.p_size",
    "world.caption_kinds",
    "cross_scorers.gallery_models",
    "cross_scorers.shortlist.model",
    "report.rows.eccv",
    "report.rows.bivlc",
    "report.rows.sugarcrepe",
}


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
    """A value params.yaml states has its default there alone; the schema repeats none (but `TWO_DEFAULTS`)."""
    schema, values = _files(REPO)
    twice = set(stated_twice(schema, values))
    copies = sorted(twice - TWO_DEFAULTS)
    assert not copies, f"defaults both in params.yaml and in the schema (keep them in params.yaml): {copies}"
    assert twice == TWO_DEFAULTS, f"no longer stated twice, drop from TWO_DEFAULTS: {sorted(TWO_DEFAULTS - twice)}"


def test_two_defaults_are_two_values():
    """Each of `TWO_DEFAULTS` is a different value in each place (a copy would be removed from the schema)."""
    schema, values = _files(REPO)
    for path in sorted(TWO_DEFAULTS):
        node, value = schema, values
        for part in path.split("."):
            node, value = node["properties"][part], value[part]
        assert node["default"] != value, path


def test_the_package_takes_params_yaml_defaults():
    """The package ships params.yaml (a link, as the schema) and fills a section's missing keys from it."""
    assert params.PARAMS_FILE.resolve() == (REPO / "params.yaml").resolve()
    assert '"params.yaml"' in (REPO / "pyproject.toml").read_text()  # package data
    values = yaml.safe_load((REPO / "params.yaml").read_text())
    for section, stated in values.items():
        if not isinstance(stated, Mapping) or section == "models":
            continue
        filled = params.section_defaults(section)
        for key, value in stated.items():
            if f"{section}.{key}" not in TWO_DEFAULTS and not isinstance(value, Mapping):
                assert filled[key] == value, f"{section}.{key}"
    assert params.section_defaults("train")["epochs"] == values["train"]["epochs"]
    assert params.section_defaults("world")["n_test"] != values["world"]["n_test"]  # one of TWO_DEFAULTS


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
