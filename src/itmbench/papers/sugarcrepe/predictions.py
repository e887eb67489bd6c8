"""SugarCrepe answers in GPT-4V's released format as a predictions format: accuracy per order and subset."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from itmbench.metrics.accuracy import accuracy_from_correct
from itmbench.papers.predictions import (
    MEAN_OF_ORDERS,
    PathLike,
    ScoreOptions,
    check_coverage,
    mean_json,
)
from itmbench.sources._common import SourceFormatError


def _answer_files(spec: PathLike) -> list[Path]:
    """The answer JSONs of a file or of a folder (<order>/gpt4v-<subset>.json beneath it)."""
    path = Path(spec)
    if path.is_dir():
        files = sorted(path.glob("*/gpt4v-*.json"))
        if not files:
            raise FileNotFoundError(f"{path}: no <order>/gpt4v-<subset>.json answer files beneath this folder")
        return files
    if not path.is_file():
        raise FileNotFoundError(f"{path}: answer file not found")
    return [path]


def _declared_size(subset: str) -> tuple[int, str] | None:
    """(instances, released.yaml key) of one subset: the declared record count of GPT-4V's answer files."""
    from itmbench.sources.released import declared_records

    return declared_records("sugarcrepe:read_gpt4v_answers", subset=subset)


def _missing_files(specs: Sequence[PathLike], found: Sequence[Path]) -> list[str]:
    """The answer files a complete set would hold beside those given: per folder given, every order and
    subset; per order given as files, every subset of it."""
    from itmbench.papers.sugarcrepe.released import ORDERS, SUBSETS, infer_order, infer_subset

    have = {(infer_order(f), infer_subset(f)) for f in found}
    missing: list[str] = []
    for spec in specs:
        folder = Path(spec)
        if folder.is_dir():
            missing += [
                str(folder / order / f"gpt4v-{subset}.json")
                for order in ORDERS
                for subset in SUBSETS
                if (order, subset) not in have
            ]
    orders = {order for order, _ in have}
    given = {f.parent for f in found}
    for order in sorted(orders):
        parent = next(p for p in given if p.name == order)
        for subset in SUBSETS:
            name = str(parent / f"gpt4v-{subset}.json")
            if (order, subset) not in have and name not in missing:
                missing.append(name)
    return missing


def read_sugarcrepe_answers(paths: Sequence[PathLike], options: ScoreOptions | None = None) -> pd.DataFrame:
    """GPT-4V-format answers of the files/folders given, with `correct` recomputed and checked against the file's.

    Coverage: the 7 subsets of every order given (a folder: of both orders), each answering ids
    0..n-1 of its subset's declared count. A missing file or instance is an error unless
    options.allow_missing (the table's attrs then hold n_missing and missing_files); an id outside
    the subset, or an instance answered twice (in two files), is an error naming both.
    """
    from itmbench.papers.sugarcrepe.released import infer_order, infer_subset, read_gpt4v_answers

    options = options or ScoreOptions()
    files = [f for spec in paths for f in _answer_files(spec)]
    first_file: dict[tuple[str, str], Path] = {}
    for path in files:
        key = (infer_order(path), infer_subset(path))
        if key in first_file:
            raise ValueError(f"{path}: answers of {key[1]} ({key[0]}) given twice (also {first_file[key]})")
        first_file[key] = path
    frames = []
    for path in files:
        answers = read_gpt4v_answers(path)
        ours = answers["multiple_choice_answer"].str.strip() == answers["caption"].str.strip()
        theirs = answers["correct"].astype(bool)
        bad = (ours != theirs).to_numpy()
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise SourceFormatError(
                path,
                f"key '{int(answers['id'].iloc[i])}'.correct",
                f"{bool(ours.iloc[i])} (multiple_choice_answer "
                f"{'equals' if ours.iloc[i] else 'is not'} the positive caption)",
                bool(theirs.iloc[i]),
            )
        frames.append(answers.assign(correct=ours.to_numpy(), file=str(path)))
    missing_files = _missing_files(paths, files)
    n_missing = 0
    if missing_files:
        sizes = [_declared_size(infer_subset(f)) for f in missing_files]
        n_files = sum(size[0] for size in sizes if size is not None)
        n_missing += check_coverage(
            missing_files[0],
            n_files,
            n_files,
            "instances",
            options,
            message=f"{len(missing_files)} answer file(s) missing: {', '.join(missing_files)} ({n_files:,} instances)",
        )
    for path, answers in zip(files, frames, strict=True):
        size = _declared_size(infer_subset(path))
        if size is None:
            continue
        expected, key = size
        ids = answers["id"].to_numpy()
        unknown = ids[ids >= expected]
        if unknown.size:
            raise SourceFormatError(
                path, f"key '{int(unknown[0])}'", f"an instance id 0..{expected - 1} (sources/released.yaml: {key})"
            )
        absent = sorted(set(range(expected)) - set(ids.tolist()))
        n_missing += check_coverage(path, len(absent), expected, "instances", options, absent)
    # one order of rows whatever the order of the files and of their records: every bootstrap over these
    # instances (the mean of orders, the mean over subtypes) resamples the same rows for the same seed
    table = pd.concat(frames, ignore_index=True).sort_values(
        ["order", "subset", "id"], kind="stable", ignore_index=True
    )
    table.attrs.update(n_missing=n_missing, missing_files=missing_files)
    return table


def sugarcrepe_answer_table(answers: pd.DataFrame, options: ScoreOptions = ScoreOptions()) -> pd.DataFrame:
    """Accuracy (%) per (subset, order), per order over all subsets ('all'), and the mean of the orders.

    Columns subset, order, n, n_correct, accuracy, lo, hi; Wilson intervals per order, a bootstrap
    over instances for the mean of orders (paired when both orders answer the same instances).
    """
    from itmbench.papers.sugarcrepe.released import ORDERS, SUBSETS

    records: list[dict[str, Any]] = []
    subsets = [s for s in SUBSETS if s in set(answers["subset"])] + ["all"]
    orders = [o for o in ORDERS if o in set(answers["order"])]
    for subset in subsets:
        part = answers if subset == "all" else answers[answers["subset"] == subset]
        per_order = {}
        for order in orders:
            flags = part.loc[part["order"] == order].sort_values(["subset", "id"])
            acc = accuracy_from_correct(flags["correct"].to_numpy(dtype=bool), options.confidence)
            lo, hi = acc.ci_percent
            records.append(
                {
                    "subset": subset,
                    "order": order,
                    "n": acc.n,
                    "n_correct": acc.successes,
                    "accuracy": acc.percent,
                    "lo": lo,
                    "hi": hi,
                }
            )
            per_order[order] = flags
        if len(per_order) == 2:
            a, b = (per_order[o] for o in orders)
            same = len(a) == len(b) and (a[["subset", "id"]].to_numpy() == b[["subset", "id"]].to_numpy()).all()
            va, vb = a["correct"].to_numpy(float), b["correct"].to_numpy(float)
            mean = mean_json([(va + vb) / 2] if same else [va, vb], options)
            records.append(
                {
                    "subset": subset,
                    "order": MEAN_OF_ORDERS,
                    "n": len(va) + len(vb),
                    "n_correct": int(va.sum() + vb.sum()),
                    "accuracy": (100 * va.mean() + 100 * vb.mean()) / 2,
                    "lo": mean["lo"],
                    "hi": mean["hi"],
                }
            )
    return pd.DataFrame.from_records(records, columns=["subset", "order", "n", "n_correct", "accuracy", "lo", "hi"])


def score_sugarcrepe_answers(paths: Sequence[PathLike], options: ScoreOptions, label: str = "GPT-4V") -> dict[str, Any]:
    """SugarCrepe accuracy of GPT-4V-format answers: per order, per subset, and the mean of orders."""
    answers = read_sugarcrepe_answers(paths, options)
    table = sugarcrepe_answer_table(answers, options)

    def entry(r: pd.Series) -> dict[str, float | int]:
        return {
            "value": r["accuracy"],
            "lo": r["lo"],
            "hi": r["hi"],
            "n": int(r["n"]),
            "n_correct": int(r["n_correct"]),
        }

    overall = table[table["subset"] == "all"]
    by_subset: dict[str, dict[str, Any]] = {}
    for _, r in table[table["subset"] != "all"].iterrows():
        by_subset.setdefault(r["subset"], {})[r["order"]] = entry(r)
    files = sorted(set(answers["file"]))
    return {
        label: {
            "files": files,
            "metrics": {r["order"]: entry(r) for _, r in overall.iterrows()},
            "by_subset": by_subset,
            "n_instances": int(answers.drop_duplicates(["subset", "id"]).shape[0]),
            "n_missing": answers.attrs["n_missing"],
            "missing_files": answers.attrs["missing_files"],
            "chance": 50.0,
            "sugarcrepe": sugarcrepe_paper_metrics(answers, options),
        }
    }


def sugarcrepe_paper_metrics(answers: pd.DataFrame, options: ScoreOptions) -> dict[str, Any]:
    """Per answer order, the SugarCrepe paper's metrics (`papers.sugarcrepe.score.summarize`: accuracy
    per subtype, the mean over subtypes, the pooled accuracy), the scorer of the world's SugarCrepe."""
    from itmbench.papers.sugarcrepe.score import gpt4v_correct, summarize

    return {
        order: summarize(gpt4v_correct(answers, order), options.n_boot, options.seed, options.confidence)["metrics"]
        for order in sorted(set(answers["order"]))
    }


def score(
    kind: str,
    files: Sequence[PathLike],
    options: ScoreOptions,
    annotations: PathLike | None = None,
    label: str | None = None,
) -> dict[str, Any]:
    """`itmbench score-predictions sugarcrepe_gpt4v`: one system (GPT-4V unless labelled)."""
    return score_sugarcrepe_answers(files, options, label or "GPT-4V")
