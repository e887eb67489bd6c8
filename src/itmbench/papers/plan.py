"""Which models the run scores on which benchmark, from params.yaml and the registry, and the metrics files
that makes (`results/<source>/metrics/<benchmark>/<model>.json`: what dvc.yaml declares).

The benchmarks are those of `registry.BENCHMARKS` (retrieval among them), and each paper's baselines
(`registry.Paper.baselines`: BISON's caption metrics, one metrics file per metric); a model
scores one when its cell is 'scored' (`itmbench.models.capabilities.cell`: a text-only model scores
no image-text benchmark, a cross scorer ranks a gallery benchmark only when
`cross_scorers.gallery_models` names it) and, where its entry has `benchmarks`, that list names it
(`listed`: an ablation one paper's table needs is scored there only). This is the rule of the workflow's `scored_models`
(`workflow/rules/helpers/cross.smk`); a slow test checks the two against Snakemake's plan.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from itmbench.models.capabilities import cell
from itmbench.papers.registry import (
    BENCHMARKS,
    GALLERY_BENCHMARKS,
    PAPERS,
    TASK_MODALITIES,
    baseline_metrics_files,
)
from itmbench.params import load_yaml, section_defaults


def benchmarks() -> list[str]:
    """Every benchmark the run scores: the registry's, in name order."""
    return sorted(BENCHMARKS)


def source_of(params: Mapping[str, Any]) -> str:
    """The run's source (`source`, default world)."""
    return str(params.get("source", "world"))


def model_specs(params: Mapping[str, Any]) -> dict[str, Any]:
    """The source's models: the world's `models`, or `coco.models` for the COCO source."""
    world = source_of(params) == "world"
    specs = params.get("models", {}) if world else params.get("coco", {}).get("models", {})
    if not specs:
        raise ValueError(f"params: no models for source {source_of(params)!r}")
    return dict(specs)


def gallery_models(params: Mapping[str, Any]) -> list[str]:
    """The cross scorers asked to rank the gallery benchmarks (the COCO source keeps its own models only)."""
    named = list(params.get("cross_scorers", {}).get("gallery_models", []))
    specs = model_specs(params)
    return [m for m in named if source_of(params) == "world" or m in specs]


def listed(spec: Mapping[str, Any], bench: str, name: str = "") -> bool:
    """Whether a model's spec lets it be scored on `bench`: its `benchmarks` names it, or it names none (every
    benchmark it can score). A model not listed has no job and no row on that benchmark."""
    chosen = spec.get("benchmarks")
    if chosen is None:
        return True
    unknown = sorted(set(chosen) - set(TASK_MODALITIES))
    if unknown:
        raise ValueError(
            f"params models.{name}.benchmarks: unknown benchmarks {unknown}; expected some of {sorted(TASK_MODALITIES)}"
        )
    return bench in chosen


def scored_models(bench: str, specs: Mapping[str, Any], gallery: Iterable[str]) -> list[str]:
    """The models (sorted) that score `bench`: those whose cell is 'scored' and that `listed` allows."""
    if bench not in TASK_MODALITIES:
        raise ValueError(f"unknown benchmark {bench!r}; expected one of {sorted(TASK_MODALITIES)}")
    gallery = list(gallery)
    return [
        m
        for m in sorted(specs)
        if listed(specs[m], bench, m)
        and cell(specs[m], TASK_MODALITIES[bench], bench in GALLERY_BENCHMARKS, gallery, name=m) == "scored"
    ]


def check_listed(specs: Mapping[str, Any], gallery: Iterable[str]) -> None:
    """Refuse a model whose `benchmarks` names one it cannot score (its cell there is not 'scored'): the
    restriction would plan nothing there, which is no restriction the author meant."""
    gallery = list(gallery)
    for name in sorted(specs):
        for bench in specs[name].get("benchmarks") or ():
            listed(specs[name], bench, name)  # names unknown benchmarks
            state = cell(specs[name], TASK_MODALITIES[bench], bench in GALLERY_BENCHMARKS, gallery, name=name)
            if state != "scored":
                raise ValueError(
                    f"params models.{name}.benchmarks: {bench!r} is {state.replace('_', ' ')} for family "
                    f"{specs[name]['family']!r}; expected benchmarks it scores"
                )


def metrics_files(params: Mapping[str, Any]) -> list[str]:
    """Every metrics file of the run that params describe, as paths from the checkout root (sorted)."""
    specs, gallery, source = model_specs(params), gallery_models(params), source_of(params)
    files = [f"results/{source}/metrics/{b}/{m}.json" for b in benchmarks() for m in scored_models(b, specs, gallery)]
    for name, entry in PAPERS.items():
        filled = {s: {**section_defaults(s), **params.get(s, {})} for s in entry.baselines}
        files += baseline_metrics_files(name, filled, f"results/{source}", source)
    return sorted(files)


def load_params(path: str | Path) -> dict[str, Any]:
    """params.yaml as a dict (the keys read here default as `itmbench.params` fills them when absent)."""
    path = Path(path)
    params = load_yaml(path)  # refuses a repeated key
    if not isinstance(params, dict):
        raise ValueError(f"{path}: expected a mapping of sections")
    return params
