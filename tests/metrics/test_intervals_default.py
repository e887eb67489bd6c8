"""One home for the default interval level: params.yaml's `score.confidence` and `DEFAULT_CONFIDENCE`.

params.yaml states the level a run uses; `metrics.intervals.DEFAULT_CONFIDENCE` is the one name every function,
dataclass and CLI option defaults a `confidence` to. This test holds the two equal and refuses a literal
second copy in the sources (issue 35).
"""

from __future__ import annotations

import re
from pathlib import Path

from itmbench.metrics.intervals import DEFAULT_CONFIDENCE, wilson_interval
from itmbench.params import section_defaults

SRC = Path(__file__).resolve().parents[2] / "src" / "itmbench"
# a confidence defaulted to a number: `confidence: float = 0.9`, `confidence=0.9`, `"--confidence", ..., default=0.9`
LITERAL_DEFAULT = re.compile(r"confidence[\"']?\s*(?::\s*float\s*)?=\s*\d|--confidence[^\n]*default\s*=\s*\d")


def test_the_schema_and_the_constant_agree():
    assert section_defaults("score")["confidence"] == DEFAULT_CONFIDENCE


def test_no_module_defaults_a_confidence_to_a_literal():
    found = [
        f"{path.relative_to(SRC)}:{n}: {line.strip()}"
        for path in sorted(SRC.rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if LITERAL_DEFAULT.search(line)
    ]
    assert found == [], "a confidence defaulted to a literal; use metrics.intervals.DEFAULT_CONFIDENCE:\n" + "\n".join(
        found
    )


def test_the_pattern_finds_each_form_it_refuses():
    for line in (
        "def f(x, confidence: float = 0.9) -> None:",
        "g(confidence=0.99)",
        'sp.add_argument("--confidence", type=open_fraction, default=0.95, help="level")',
    ):
        assert LITERAL_DEFAULT.search(line), line
    assert not LITERAL_DEFAULT.search("def f(confidence: float = DEFAULT_CONFIDENCE):")


def test_a_call_without_a_level_uses_the_default():
    assert wilson_interval(3, 10) == wilson_interval(3, 10, DEFAULT_CONFIDENCE)
