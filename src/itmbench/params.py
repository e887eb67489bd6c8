"""params.schema.yaml: the one statement of every parameter, its default and its description.

The schema (workflow/schemas/params.schema.yaml; `itmbench/params.schema.yaml` is a link to it, shipped
as package data) is what Snakemake validates params.yaml against, filling its defaults. The config
dataclasses state only their fields' names and types and their checks (`__post_init__`); each names
its schema section in a class attribute `SECTION` and is built from a section's values by
`make_config` (or `config_from_section` for a section named at the call):

- a section is a dotted path through the schema's `properties`: `bison`, `coco_benchmarks.mcic`;
  `*` steps into `additionalProperties` (`models.*`: one model entry); `$defs.<name>` is a
  definition that params.yaml does not validate itself (`$defs.llm`: the keys of `coco.llm`);
- keys the section does not name are rejected, naming the section, the keys and the known keys;
- the schema's defaults fill the missing keys as Snakemake's `validate(..., set_default=True)` does
  (nested objects too), and the values are validated against the schema;
- list values of tuple-typed fields become tuples;
- a class's `OUTSIDE` maps fields that another section states to that section's property (the
  world's truth settings: `{"relation_margin": "world.relation_margin"}`): their default and their
  schema come from there, and their value from the caller (itmbench.papers.registry passes the world's).

The class's own checks (`__post_init__`) run first, so their messages win; a value the schema rejects
and the class accepts is reported with the schema's message, naming the section and the key.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

import yaml

SCHEMA_FILE = Path(__file__).with_name("params.schema.yaml")

T = TypeVar("T")


@cache
def _schema() -> dict[str, Any]:
    return yaml.safe_load(SCHEMA_FILE.read_text())


def schema() -> dict[str, Any]:
    """The parsed params schema (a fresh copy: callers may change it)."""
    return copy.deepcopy(_schema())


@cache
def _section(path: str) -> dict[str, Any]:
    node = _schema()
    parts = path.split(".")
    if parts[0] == "$defs":
        if len(parts) < 2 or parts[1] not in node.get("$defs", {}):
            raise ValueError(f"params schema: no definition {path!r}; expected one of {sorted(node.get('$defs', {}))}")
        node, parts = node["$defs"][parts[1]], parts[2:]
    for i, part in enumerate(parts):
        if part == "*":
            child = node.get("additionalProperties")
            if not isinstance(child, dict):
                raise ValueError(f"params schema: {'.'.join(parts[:i]) or 'the root'} has no entries ('*')")
        else:
            child = node.get("properties", {}).get(part)
            if child is None:
                raise ValueError(
                    f"params schema: no section {'.'.join(parts[: i + 1])!r}; "
                    f"expected one of {sorted(node.get('properties', {}))}"
                )
        node = child
    return node


def section_schema(path: str) -> dict[str, Any]:
    """The schema of a section (see the module docstring for the paths), a fresh copy."""
    return copy.deepcopy(_section(path))


def section_defaults(path: str) -> dict[str, Any]:
    """The values an empty section gets: every property's default (nested defaults filled)."""
    return fill_defaults(path, {})[0]


@cache
def _validator_class() -> Any:
    from jsonschema import Draft202012Validator, validators

    validate_properties = Draft202012Validator.VALIDATORS["properties"]

    def set_defaults(validator: Any, properties: Any, instance: Any, schema: Any) -> Any:
        # As snakemake.utils.validate(set_default=True), with a copy of each default (never the schema's own).
        if isinstance(instance, dict):
            for name, subschema in properties.items():
                if "default" in subschema:
                    instance.setdefault(name, copy.deepcopy(subschema["default"]))
        yield from validate_properties(validator, properties, instance, schema)

    return validators.extend(Draft202012Validator, {"properties": set_defaults})


def _jsonable(value: Any) -> Any:
    """The JSON form of a value as the schema sees it: tuples as lists, numpy scalars as Python numbers."""
    if isinstance(value, Mapping):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item") and callable(value.item) and getattr(value, "shape", None) == ():
        return value.item()
    return value


def _error_text(label: str, error: Any) -> str:
    where = ".".join(str(p) for p in error.absolute_path)
    return f"{label}: {where + ': ' if where else ''}{error.message}"


def fill_defaults(path: str, values: Mapping[str, Any], label: str | None = None) -> tuple[dict[str, Any], list[str]]:
    """(values with the section's defaults filled, in JSON form; the schema's complaints about them)."""
    return _fill_with(_section(path), values, label or _label(path))


def _label(path: str) -> str:
    parts = path.split(".")
    if parts[0] == "$defs":
        return f"{parts[-1]} params"
    return f"{path} params" if len(parts) == 1 else path


def _is_tuple(field: dataclasses.Field) -> bool:
    kind = field.type if isinstance(field.type, str) else getattr(field.type, "__name__", str(field.type))
    return kind.startswith(("tuple", "Tuple"))


def outside_fields(cls: type) -> dict[str, str]:
    """Fields of a config class that another section states: field -> that section's property path."""
    return dict(getattr(cls, "OUTSIDE", {}))


def config_from_section(
    cls: type[T],
    section: str,
    values: Mapping[str, Any] | None = None,
    *,
    label: str | None = None,
    given: Mapping[str, Any] | None = None,
) -> T:
    """The config `cls` of a params section's values (defaults from the schema; unknown keys named).

    `label` names the section in messages (default: `<section> params`); `given` holds fields that are
    not parameters at all (a model's name: the key of its entry), passed to the class unchecked.
    """
    values = dict(values or {})
    label = label or _label(section)
    properties = _section(section).get("properties", {})
    outside = outside_fields(cls)
    known = set(properties) | set(outside)
    unknown = set(values) - known
    if unknown:
        raise ValueError(f"{label}: unknown keys {sorted(unknown)}; expected some of {sorted(known)}")
    inside = {k: v for k, v in values.items() if k not in outside}
    document, errors = fill_defaults(section, inside, label)
    for name, prop in outside.items():
        where, _, key = prop.rpartition(".")
        sub = {name: values[name]} if name in values else {}
        wrapped = {"type": "object", "properties": {name: _section(where)["properties"][key]}}
        filled = _fill_with(wrapped, sub, label)
        document.update(filled[0])
        errors += filled[1]
    kwargs: dict[str, Any] = {}
    for field in dataclasses.fields(cls):
        name = field.name
        if given and name in given:
            kwargs[name] = given[name]
            continue
        if name in values and not isinstance(values[name], Mapping):
            value = values[name]  # as given (the schema saw its JSON form)
        elif name in document:
            value = document[name]
        else:
            continue  # no schema default: the class's own (or a missing required field)
        if _is_tuple(field) and isinstance(value, list):
            value = tuple(value)
        kwargs[name] = value
    try:
        config = cls(**kwargs)
    except ValueError:
        raise  # the class's own check: its message names the field
    except TypeError as exc:
        if errors:
            raise ValueError("; ".join(errors)) from exc
        raise
    if errors:
        raise ValueError("; ".join(errors))
    return config


def _fill_with(schema: dict[str, Any], values: Mapping[str, Any], label: str) -> tuple[dict[str, Any], list[str]]:
    document = _jsonable(values)
    errors = sorted(_validator_class()(schema).iter_errors(document), key=lambda e: list(map(str, e.absolute_path)))
    return document, [_error_text(label, e) for e in errors]


def make_config(cls: type[T], values: Mapping[str, Any] | None = None, /, **overrides: Any) -> T:
    """The config `cls` of its section (`cls.SECTION`): the schema's defaults, then `values`, then `overrides`."""
    section = getattr(cls, "SECTION", None)
    if section is None:
        raise TypeError(f"{cls.__name__} names no params section (class attribute SECTION)")
    return config_from_section(cls, section, {**(values or {}), **overrides})
