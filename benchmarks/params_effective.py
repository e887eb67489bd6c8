"""The effective params of a tree, as JSON: what a run and each code path read once the defaults are filled.

Run from a checkout's root with that checkout's package first on the path, once per tree, and compare the
outputs (moving a default between the schema and params.yaml must leave them equal):

    PYTHONPATH=src python benchmarks/params_effective.py > after.json
    (cd ../main-tree && PYTHONPATH=src python benchmarks/params_effective.py) > before.json   # or any tree
    cmp before.json after.json

It prints, with sorted keys:
- `run`: params.yaml filled as the workflow fills it (`fill_config` where the tree has it, else Snakemake's
  `validate(config, schema, set_default=True)`), alone, under the tests' `TINY` and under each
  workflow/config/*.yaml merged over it as `--configfile` merges;
- `sections`: every section's defaults as the package fills them for a CLI command or a test
  (`section_defaults` of each property of the schema, its `$defs` and a model entry `models.*`).
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import yaml
from snakemake.utils import update_config

from itmbench import params

ROOT = Path.cwd()
sys.path.insert(0, str(ROOT / "tests" / "workflow"))
from workflow_helpers import TINY  # noqa: E402


def filled(config: dict) -> dict:
    config = copy.deepcopy(config)
    params.check_schema(config)
    if hasattr(params, "fill_config"):
        params.fill_config(config)
    else:
        from snakemake.utils import validate

        validate(config, schema=str(ROOT / "workflow/schemas/params.schema.yaml"), set_default=True)
    params.check_config(config)
    return config


def merged(*overrides: dict) -> dict:
    config = yaml.safe_load((ROOT / "params.yaml").read_text())
    for override in overrides:
        update_config(config, copy.deepcopy(override))
    return config


def main() -> None:
    runs = {"params.yaml": filled(merged()), "TINY": filled(merged(TINY))}
    for path in sorted((ROOT / "workflow" / "config").glob("*.yaml")):
        override = yaml.safe_load(path.read_text())
        runs[path.name] = filled(merged(override))
        runs[f"TINY + {path.name}"] = filled(merged(TINY, override))
    schema = params.schema()
    paths = [*schema["properties"], *(f"$defs.{name}" for name in schema.get("$defs", {})), "models.*"]
    for name, node in schema["properties"].items():
        paths += [f"{name}.{sub}" for sub, child in node.get("properties", {}).items() if "properties" in child]
    sections = {path: params.section_defaults(path) for path in paths}
    print(json.dumps({"run": runs, "sections": sections}, indent=1, sort_keys=True, default=str))


if __name__ == "__main__":
    main()
