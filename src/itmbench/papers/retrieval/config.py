"""COCO-style retrieval built in the world: its parameters (params.yaml section `retrieval`).

The fields' types and descriptions are the section of workflow/schemas/params.schema.yaml and their defaults
params.yaml's section (build a config with `itmbench.params.make_config(RetrievalConfig, values)`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class RetrievalConfig:
    """Retrieval in the world (params.yaml section `retrieval`): the split whose items form the gallery."""

    SECTION: ClassVar[str] = "retrieval"

    split: str
