"""dvc.yaml's `metrics:` block: read, checked against the run's metrics files, and rewritten in place.

The list is generated, never typed: `itmbench dvc-metrics` writes every metrics file the default run
writes (`itmbench.papers.plan.metrics_files`: the registry's benchmarks, params.yaml's models, which
model scores which benchmark), so that `dvc metrics diff` covers every paper. The rewrite keeps the
rest of dvc.yaml (comments, params, plots) as it is; `itmbench dvc-metrics --check` (and a test)
fails when the block differs, naming the command.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import yaml

REGENERATE = "itmbench dvc-metrics"
# The `metrics:` key at the start of a line, with its indented, list and blank lines.
_BLOCK = re.compile(r"(?m)^metrics:[^\n]*\n(?:(?:[ \t]+[^\n]*|-[^\n]*|)\n)*")


def declared_metrics(dvc_yaml: str) -> list[str]:
    """The metrics files a dvc.yaml text declares (its `metrics:` list, in order)."""
    doc = yaml.safe_load(dvc_yaml) or {}
    entries = doc.get("metrics") or []
    return [e if isinstance(e, str) else next(iter(e)) for e in entries]


def metrics_block(files: Iterable[str]) -> str:
    """The `metrics:` block for these files, its first line naming the command that writes it."""
    lines = [f"metrics:  # written by `{REGENERATE}` from params.yaml and the registry: do not edit"]
    lines += [f"  - {f}" for f in files]
    return "\n".join(lines) + "\n"


def rewrite(dvc_yaml: str, files: Iterable[str]) -> str:
    """dvc.yaml's text with its `metrics:` block replaced (appended when it has none); the rest kept."""
    block = metrics_block(files)
    matches = list(_BLOCK.finditer(dvc_yaml))
    if len(matches) > 1:
        raise ValueError("dvc.yaml: more than one `metrics:` key")
    if not matches:
        return dvc_yaml.rstrip("\n") + "\n" + block
    text = matches[0].group(0)
    blank_after = text[len(text.rstrip("\n")) + 1 :]  # the blank lines before the next key stay
    return dvc_yaml[: matches[0].start()] + block + blank_after + dvc_yaml[matches[0].end() :]


def check(dvc_yaml: str, expected: list[str]) -> list[str]:
    """What is wrong with a dvc.yaml text's `metrics:` list against the run's files (empty: current)."""
    declared = declared_metrics(dvc_yaml)
    if declared == expected:
        return []
    problems = [f"dvc.yaml: metrics lacks {f}" for f in sorted(set(expected) - set(declared))]
    problems += [f"dvc.yaml: metrics lists {f}, which no job writes" for f in sorted(set(declared) - set(expected))]
    if not problems:
        problems.append("dvc.yaml: metrics are not in the generated order")
    return [*problems, f"run `{REGENERATE}` to regenerate the list"]
