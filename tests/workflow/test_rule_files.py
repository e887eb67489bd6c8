"""Static checks of the rule files: what Snakemake resolves relative to the .smk file that names it."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RULES = REPO / "workflow/rules"


def test_every_rules_conda_environment_is_found_from_its_own_file():
    """A `conda:` path is relative to the .smk file that declares the rule (Snakemake's rule), so a rule moved
    into workflow/rules/papers/ must name the file from there: the wrong one fails only when a job's metadata is
    recorded (a dry run and --lint pass)."""
    names = dict(re.findall(r'^(\w*ENV) = "([^"]+)"', (RULES / "common.smk").read_text(), flags=re.M))
    assert {"ENV", "PAPER_ENV"} <= set(names)
    seen = 0
    for smk in sorted(RULES.rglob("*.smk")):
        for value in re.findall(r"^\s+conda:\n\s+(\S+)\n", smk.read_text(), flags=re.M):
            path = names[value] if value in names else value.strip("\"'")
            assert (smk.parent / path).resolve().is_file(), f"{smk.relative_to(REPO)}: conda {value} -> {path}"
            seen += 1
    assert seen > 50  # every rule declares one
