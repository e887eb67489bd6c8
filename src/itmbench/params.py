"""params.schema.yaml and params.yaml: every parameter's type, bounds and description, and its one default.

Each default has one home (issue 35.3). params.yaml states every value a run reads, and that value is its
default; the schema (workflow/schemas/params.schema.yaml) states each key's type, bounds and description,
and a default only where params.yaml cannot: the fields of an entry of a map (`models.*`), the definitions
of `$defs`, and the keys params.yaml leaves out. The package ships both as package data (`params.schema.yaml`
and `params.yaml` in `itmbench/` are links to them), and `_schema()` is the file's schema with params.yaml's
values added as defaults (`with_params_defaults`): the schema every fill and check below uses, so a
section given alone (a CLI command's `--config`, a test) gets the run's values. `fill_config` fills the
whole params as Snakemake's `validate(..., set_default=True)` would with that schema (workflow/rules/
common.smk calls it). tests/test_params_defaults.py refuses a default stated in both files.

The config dataclasses state only their fields' names and types, and check (`__post_init__`) only what the
schema cannot state (its ranges, enums and `x-constraints` are checked here, once); each names its schema
section in a class attribute `SECTION` and is built from a section's values by `make_config` (or
`config_from_section` for a section named at the call):

- a section is a dotted path through the schema's `properties`: `bison`, `coco_benchmarks.mcic`;
  `*` steps into `additionalProperties` (`models.*`: one model entry); `$defs.<name>` is a
  definition that params.yaml does not validate itself (`$defs.llm`: the keys of `coco.llm`);
- keys the section does not name are rejected, naming the section, the keys and the known keys;
- the defaults (`_schema()`'s) fill the missing keys as Snakemake's `validate(..., set_default=True)` does
  (nested objects too), and the values are validated against the schema;
- list values of tuple-typed fields become tuples;
- a class's `OUTSIDE` maps fields that another section states to that section's property (the
  world's truth settings: `{"relation_margin": "world.relation_margin"}`): their default and their
  schema come from there, and their value from the caller (itmbench.papers.registry passes the world's).

The class's own checks (`__post_init__`) run first, so their messages win; a value the schema rejects
and the class accepts is reported with the schema's message, naming the section and the key.

What JSON Schema cannot state is checked here too, by `check_section` (every `config_from_section`, and
`check_config` on the whole params.yaml, which `workflow/rules/common.smk` calls after `fill_config`):

- no NaN or infinity anywhere (`check_finite`, naming the dotted key);
- the cross-field constraints of `constraints()`, each section's `x-constraints` in the schema: a lower
  bound at most its upper bound, weights not all zero, probabilities summing to 1, a count at most the
  length of a list;
- YAML with a key repeated in one mapping is refused (`load_yaml`: the file, the key and both lines),
  where PyYAML would keep the last value silently.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
import math
import os
from collections.abc import Iterator, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import yaml

from itmbench.errors import InputError

SCHEMA_FILE = Path(__file__).with_name("params.schema.yaml")
PARAMS_FILE = Path(__file__).with_name("params.yaml")  # a link to the repository's params.yaml (package data)

T = TypeVar("T")


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a key that a mapping repeats (PyYAML keeps the last one silently)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, yaml.Mark] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # `<<: *anchor`: merged keys may be overridden
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.setdefault(key, key_node.start_mark)
            except TypeError:  # an unhashable key: PyYAML's own error follows
                continue
            if first is not key_node.start_mark:
                where = [f"line {m.line + 1}" for m in (first, key_node.start_mark)]
                if where[0] == where[1]:
                    where = [f"{w} column {m.column + 1}" for w, m in zip(where, (first, key_node.start_mark))]
                raise InputError(
                    f"{key_node.start_mark.name}: key {key!r} appears twice in one mapping, at {where[0]} and "
                    f"{where[1]}; expected each key once"
                )
        return super().construct_mapping(node, deep=deep)


def load_yaml(path: str | os.PathLike[str]) -> Any:
    """A YAML file's document, refusing repeated keys; syntax errors and non-UTF-8 bytes name the file."""
    with open(path, "rb") as handle:  # bytes: PyYAML's reader names the file and the offset of a bad byte
        return yaml.load(handle, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass


def load_yaml_text(text: str, name: str) -> Any:
    """A YAML document given as text (`name` in messages), refusing repeated keys."""
    loader = _UniqueKeyLoader(text)
    loader.name = name
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


@cache
def _schema() -> dict[str, Any]:
    return with_params_defaults(load_yaml(SCHEMA_FILE), load_yaml(PARAMS_FILE))


def with_params_defaults(schema: dict[str, Any], values: Mapping[str, Any]) -> dict[str, Any]:
    """The schema with params.yaml's values as the defaults of the properties it states (in place).

    params.yaml is the home of those defaults; the schema states a default only where params.yaml cannot
    (the fields of a model entry, keys params.yaml leaves out). A property whose schema default is `{}` is a
    section: its own properties take params.yaml's values. A `$defs` definition that params.yaml fills in
    another section (`NESTED`: `coco.llm` holds `$defs.llm`'s keys) takes the values stated there. A property
    the schema marks required gets no default; one whose schema states a default keeps it
    (tests/test_params_defaults.py refuses one that params.yaml also states).
    """
    _fill_defaults_from(schema, values)
    for path, definition in NESTED.items():
        section, _, name = definition.partition(".")
        if section == "$defs" and name in schema.get("$defs", {}):
            for _, stated in _entries(values, path):
                if isinstance(stated, Mapping):
                    _fill_defaults_from(schema["$defs"][name], stated)
    return schema


def _fill_defaults_from(schema: dict[str, Any], values: Mapping[str, Any]) -> None:
    """with_params_defaults' walk of one schema node and the values params.yaml states for it."""
    properties = schema.get("properties", {})
    for key, value in values.items():
        node = properties.get(key)
        if not isinstance(node, dict):
            continue
        if "default" not in node:
            if key not in schema.get("required", ()):
                node["default"] = copy.deepcopy(value)
        elif node["default"] == {} and isinstance(value, Mapping):
            _fill_defaults_from(node, value)


def load_schema() -> None:
    """Parse the schema and build its validator class now (the warm worker does, once for all its jobs)."""
    _schema()
    _validator_class()


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


def _walk(value: Any, where: str) -> Iterator[tuple[str, Any]]:
    yield where, value
    if isinstance(value, Mapping):
        for k, v in value.items():
            yield from _walk(v, f"{where}.{k}" if where else str(k))
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from _walk(v, f"{where}[{i}]")


def check_finite(values: Any, label: str) -> None:
    """Refuse NaN and infinity at any depth (JSON Schema compares them as numbers), naming the dotted key."""
    for where, value in _walk(_jsonable(values), ""):
        if isinstance(value, float) and not math.isfinite(value):
            raise InputError(f"{label}: {where or 'the value'}: {value} is not a finite number; expected a number")


class Constraint(NamedTuple):
    """A constraint between keys of one section that JSON Schema cannot state: `kind` on `keys`."""

    kind: str  # "at_most": keys[0] <= keys[1]; "not_all_zero": a mapping or list of weights;
    # "sums_to_one": a list of probabilities; "at_most_count": keys[0] <= the length of the list keys[1];
    # "member_of": keys[0] is one of the list keys[1]; "distinct_values": a mapping's values differ;
    # "different": keys[0] != keys[1]
    keys: tuple[str, ...]
    why: str


@functools.cache
def constraints() -> dict[str, tuple[Constraint, ...]]:
    """Per schema section, what must hold between its keys (checked after the schema and the class's checks):
    each section's `x-constraints` in the schema, the one statement of them."""
    return {
        section: tuple(Constraint(c["kind"], tuple(c["keys"]), c["why"]) for c in node["x-constraints"])
        for section, node in _schema()["properties"].items()
        if "x-constraints" in node
    }


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _violation(rule: Constraint, values: Mapping[str, Any], label: str) -> str | None:
    if any(key not in values for key in rule.keys):
        return None
    first = values[rule.keys[0]]
    if rule.kind == "at_most":
        second = values[rule.keys[1]]
        if _is_number(first) and _is_number(second) and first > second:
            low, high = rule.keys
            return f"{label}: {low}={first} > {high}={second}; expected {low} <= {high} ({rule.why})"
    elif rule.kind == "not_all_zero":
        weights = list(first.values()) if isinstance(first, Mapping) else first
        if isinstance(weights, Sequence) and all(_is_number(w) for w in weights) and not any(w > 0 for w in weights):
            return f"{label}: {rule.keys[0]}: every weight is 0; expected some weight > 0 ({rule.why})"
    elif rule.kind == "sums_to_one":
        if isinstance(first, Sequence) and all(_is_number(p) for p in first) and abs(sum(first) - 1.0) > 1e-6:
            return f"{label}: {rule.keys[0]}={list(first)} sums to {sum(first):g}; expected a sum of 1 ({rule.why})"
    elif rule.kind == "at_most_count":
        items = values[rule.keys[1]]
        if _is_number(first) and isinstance(items, Sequence) and first > len(items):
            return (
                f"{label}: {rule.keys[0]}={first} > {len(items)} entries of {rule.keys[1]}; "
                f"expected at most {len(items)} ({rule.why})"
            )
    elif rule.kind == "member_of":
        items = values[rule.keys[1]]
        if isinstance(items, Sequence) and not isinstance(items, str) and first not in items:
            low, high = rule.keys
            return f"{label}: {low}={first!r} is not in {high}={list(items)}; expected one of them ({rule.why})"
    elif rule.kind == "different":
        if first == values[rule.keys[1]]:
            low, high = rule.keys
            return f"{label}: {low} = {high} = {first!r}; expected two different values ({rule.why})"
    elif rule.kind == "distinct_values":
        if isinstance(first, Mapping):
            by_value: dict[Any, list[str]] = {}
            for key, value in first.items():
                by_value.setdefault(json.dumps(value, sort_keys=True), []).append(str(key))
            shared = [keys for keys in by_value.values() if len(keys) > 1]
            if shared:
                return (
                    f"{label}: {rule.keys[0]}: {' and '.join(shared[0])} are both {first[shared[0][0]]!r}; "
                    f"expected a different value for each ({rule.why})"
                )
    else:
        raise ValueError(f"params x-constraints: unknown kind {rule.kind!r}")
    return None


def check_section(path: str, values: Mapping[str, Any], label: str | None = None) -> None:
    """Refuse a section's non-finite numbers and the violations of its `constraints()`, naming the keys."""
    label = label or _label(path)
    check_finite(values, label)
    problems = [m for rule in constraints().get(path, ()) if (m := _violation(rule, values, label))]
    if problems:
        raise InputError("; ".join(problems))


def validated_section(path: str, values: Mapping[str, Any] | None = None, label: str | None = None) -> dict[str, Any]:
    """A section's values with its defaults filled, checked against the schema and `check_section`
    (for a section that no config class states: `score`)."""
    label = label or _label(path)
    check_finite(values or {}, label)
    document, errors = fill_defaults(path, values or {}, label)
    if errors:
        raise InputError("; ".join(errors))
    check_section(path, document, label)
    return document


# Sections that params.yaml holds but its schema does not validate (their keys live in a definition or
# another section, so that their defaults are not filled into params.yaml): checked by `check_config`.
NESTED: dict[str, str] = {"coco.llm": "$defs.llm", "coco.sdxl": "$defs.sdxl", "coco.train": "train"}


def _entries(config: Mapping[str, Any], path: str) -> Iterator[tuple[str, Any]]:
    """(dotted key, value) of every node of a section path in the config (`*`: each entry)."""
    nodes: list[tuple[str, Any]] = [("", config)]
    for part in path.split("."):
        step = []
        for where, node in nodes:
            if not isinstance(node, Mapping):
                continue
            keys = list(node) if part == "*" else [part] if part in node else []
            step += [(f"{where}.{k}" if where else str(k), node[k]) for k in keys]
        nodes = step
    yield from nodes


def check_schema(config: Mapping[str, Any]) -> None:
    """Validate the whole params against the schema, each complaint in one line naming the dotted key
    (`params score.seed: -1 is less than the minimum of 0`); Snakemake's `validate` prints the schema
    and the instance over many lines. The config itself is not changed (defaults fill a copy)."""
    document = _jsonable(copy.deepcopy(dict(config)))
    errors = sorted(_validator_class()(_schema()).iter_errors(document), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        raise InputError("; ".join(_error_text("params", e) for e in errors))


def fill_config(config: dict[str, Any]) -> None:
    """Fill the missing keys of the whole params in place, as Snakemake's `validate(config, schema,
    set_default=True)` does, with the defaults of the schema and of params.yaml (`_schema()`)."""
    _validator_class()(_schema()).validate(config)


def check_config(config: Mapping[str, Any]) -> None:
    """The checks of the whole params (after Snakemake's `validate`): no NaN or infinity anywhere; each
    section's constraints; the sections nested in others (`NESTED`, a model's `train` overrides over the
    `train` section) against their schema."""
    check_finite(config, "params")
    for path in constraints():
        for where, values in _entries(config, path):
            if isinstance(values, Mapping):
                check_section(path, values, f"params {where}")
    for where, definition in NESTED.items():
        for key, values in _entries(config, where):
            if isinstance(values, Mapping):
                validated_section(definition, copy.deepcopy(dict(values)), f"params {key}")
    check_references(config)
    coco_model_specs(config)  # a `coco.only_models` name that is not a model is refused when the run is planned
    train = config.get("train", {})
    for models in ("models", "coco.models"):
        for key, spec in _entries(config, f"{models}.*"):
            if isinstance(spec, Mapping) and spec.get("train"):
                merged = copy.deepcopy({**train, **spec["train"]})
                validated_section("train", merged, f"params {key}.train (over `train`)")


# Where params name a model (of `models` or `coco.models`): the report's rows, pairs and stand-ins. A
# path ending in `{}` names a mapping whose keys are models, `[]` a list of them (`[][]`: of lists).
MODEL_REFERENCES = (
    "report.rows.*.{}",
    "report.bivlc_paired[][]",
    "report.bison_paired[][]",
    "report.bison_feature_pairs[][]",
    "report.mcic_paired[][]",
    "report.sugarcrepe_paired[][]",
    "report.eccv_paired[][]",
    "report.cxc_paired[][]",
    "report.bivlc_figure4.models[]",
    "report.bison_table1_model",
    "report.cxc.encoders.*",
    "report.cxc.ablations.*",
)


def _model_names(config: Mapping[str, Any], reference: str) -> Iterator[tuple[str, Any]]:
    """(dotted key, value) of every model name a `MODEL_REFERENCES` path finds in the config."""
    path = reference.replace("[]", "").removesuffix(".{}")
    for where, node in _entries(config, path):
        if reference.endswith(".{}"):
            yield from ((f"{where}.{key}", key) for key in (node if isinstance(node, Mapping) else ()))
        elif reference.endswith("[][]"):
            for i, pair in enumerate(node if isinstance(node, list) else ()):
                names = pair if isinstance(pair, list) else ()
                yield from ((f"{where}[{i}][{j}]", name) for j, name in enumerate(names))
        elif reference.endswith("[]"):
            yield from ((f"{where}[{i}]", name) for i, name in enumerate(node if isinstance(node, list) else ()))
        else:
            yield where, node


def init_cycle(models: Mapping[str, Any], start: str) -> list[str] | None:
    """The models of the `init` chain from `start` that lead back to one of them (`[a, b, a]`), or None."""
    chain = [start]
    while True:
        spec = models.get(chain[-1])
        parent = spec.get("init") if isinstance(spec, Mapping) else None
        if parent is None or parent not in models:
            return None
        if parent in chain:
            return [*chain[chain.index(parent) :], parent]
        chain.append(parent)


def check_references(config: Mapping[str, Any]) -> None:
    """Refuse the names that point at nothing: a report entry naming no model of `models` or `coco.models`,
    a model's `init` naming no model of its own list or leading back to itself (Snakemake would say only
    "Cyclic dependency on rule train"), and a `registry` overlay file that does not exist."""
    lists = {where: spec for where in ("models", "coco.models") for _, spec in _entries(config, where)}
    known = sorted({name for models in lists.values() if isinstance(models, Mapping) for name in models})
    for reference in MODEL_REFERENCES:
        for where, name in _model_names(config, reference):
            if name not in known:
                raise InputError(f"params {where}: {name!r} is no model; expected one of (models, coco.models) {known}")
    for where, models in lists.items():
        if not isinstance(models, Mapping):
            continue
        for name, spec in models.items():
            parent = spec.get("init") if isinstance(spec, Mapping) else None
            if parent is not None and parent not in models:
                raise InputError(
                    f"params {where}.{name}.init: {parent!r} is no model of `{where}`; expected one of {sorted(models)}"
                )
            cycle = init_cycle(models, name)
            if cycle:
                raise InputError(
                    f"params {where}: the init chain {' -> '.join(cycle)} loops (each model would train from "
                    f"itself); expected a chain that ends in a model without `init`"
                )
    registry = config.get("registry")
    if registry and not Path(registry).is_file():
        what = "a folder" if Path(registry).is_dir() else "no such file"
        raise InputError(
            f"params registry: {registry}: {what} (from {Path.cwd()}); expected a registry overlay file "
            f"(released.yaml's format, e.g. one written by `itmbench export-release`)"
        )


def coco_model_specs(config: Mapping[str, Any]) -> dict[str, Any]:
    """The COCO source's models: `coco.models`, or only those `coco.only_models` names (a config file's
    `coco.models` is merged into params.yaml's, so a selection is how a run scores one checkpoint alone)."""
    coco = config.get("coco") or {}
    models = dict(coco.get("models") or {})
    only = coco.get("only_models")
    if only is None:
        return models
    unknown = [name for name in only if name not in models]
    if unknown:
        raise InputError(
            f"params coco.only_models: {unknown} not in coco.models; expected some of {sorted(models)} "
            "(add the model to coco.models in the same config file)"
        )
    return {name: models[name] for name in only}


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
    check_finite(values, label)
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
            raise InputError("; ".join(errors)) from exc
        raise
    if errors:
        raise InputError("; ".join(errors))
    check_section(section, document, label)
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
