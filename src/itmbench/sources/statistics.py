"""Dataset statistics regenerated from the released files, side by side with the published numbers.

Published numbers live in `itmbench/papers/<paper>/published_statistics.csv` (long format: table,
row, column, value, source). Every comparison table has the columns

    table, row, column, regenerated_from, published, regenerated, difference, status, note, source

where `difference` = regenerated rounded to the published number's decimals minus published, and
`status` is one of: agree (difference 0), disagree (the files give another number: `note` says
what is known), not_in_files (the released files cannot give it: `note` says why),
not_published (a regenerated number the paper does not print).
"""

from __future__ import annotations

import csv
import os
from collections.abc import Mapping
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from itmbench.papers.bivlc import released as bivlc_source
from itmbench.papers.cxc import released as cxc_source
from itmbench.papers.eccv import released as eccv_source
from itmbench.papers.mcic import released as mcic_source
from itmbench.papers.sugarcrepe import released as sugarcrepe_source
from itmbench.sources._common import FLOAT, INT, STRING, typed_frame
from itmbench.sources.released import resolve

PAPERS = ("cxc", "mcic", "eccv", "bivlc")
AGREE, DISAGREE, NOT_IN_FILES, NOT_PUBLISHED = "agree", "disagree", "not_in_files", "not_published"
PUBLISHED_SCHEMA: dict[str, str] = {
    "table": STRING,
    "row": STRING,
    "column": STRING,
    "value": FLOAT,
    "decimals": INT,
    "source": STRING,
}
COMPARISON_SCHEMA: dict[str, str] = {
    "table": STRING,
    "row": STRING,
    "column": STRING,
    "regenerated_from": STRING,
    "published": FLOAT,
    "regenerated": FLOAT,
    "difference": FLOAT,
    "status": STRING,
    "note": STRING,
    "source": STRING,
}

# What is known about each number the files do not reproduce, keyed (paper, table, row, column).
NOTES: dict[tuple[str, str, str, str], str] = {
    ("cxc", "section 3 text", "STS other-modality sampling", "positive pairs"): (
        "no count of the released aggregated files gives 20,587: other-modality (c2c_isim) STS pairs "
        "with agg_score >= 3 number 1,092 (val) + 583 (test) = 1,675, and all STS positives 30,967; "
        "the number may count something the released files do not hold"
    ),
    ("mcic", "Table 1", "dev", "#unique images"): (
        "the released dev file names 2,384 distinct images (1,664 with 5 examples, 385 with 1, the rest 2-6), not 2,000"
    ),
    ("mcic", "Table 1", "test", "#unique images"): (
        "the released test file names 2,621 distinct images (1,679 with 5 examples, 619 with 1, "
        "the rest 2-6), not 2,000"
    ),
    ("mcic", "Table 1", "train", "#unique images"): "the train split is a Git LFS object, not mirrored",
    ("mcic", "Table 1", "train", "# instances"): "the train split is a Git LFS object, not mirrored",
    ("mcic", "Table 1", "total", "#unique images"): "needs the train split (Git LFS object, not mirrored)",
    ("mcic", "Table 1", "total", "# instances"): "needs the train split (Git LFS object, not mirrored)",
    ("mcic", "section 3.3 text", "all splits", "instances"): "needs the train split (Git LFS object, not mirrored)",
    ("eccv", "Table 3", "Human-verified positives", "# positive images"): (
        "only the union with CxC (ECCV Caption) is released, not the human-verified positives alone"
    ),
    ("eccv", "Table 3", "Human-verified positives", "# positive captions"): (
        "only the union with CxC (ECCV Caption) is released, not the human-verified positives alone"
    ),
    ("eccv", "Table 3", "Human-verified positives", "# positive images (x original)"): (
        "only the union with CxC (ECCV Caption) is released, not the human-verified positives alone"
    ),
    ("eccv", "Table 3", "Human-verified positives", "# positive captions (x original)"): (
        "only the union with CxC (ECCV Caption) is released, not the human-verified positives alone"
    ),
    ("eccv", "section 3.2 text", "subsampled queries", "# query captions"): (
        "1,333 caption queries were sampled; the released files (and Table 3) hold 1,332 after the "
        "section 3.3 post-processing removed meaningless and wrong captions"
    ),
    ("bivlc", "Table 1", "SugarCrepe", "Swap Obj"): (
        "RAIVNLab/sugar-crepe data/swap_obj.json (main) lacks key '108' and holds 245 instances; BiVLC's "
        "copy test_SugarCrepe.csv and SugarCrepe's GPT-4V answer files hold 246"
    ),
    ("bivlc", "Table 1", "SugarCrepe", "Total"): (
        "RAIVNLab/sugar-crepe data/swap_obj.json (main) lacks key '108': 7,511 instances; BiVLC's copy "
        "test_SugarCrepe.csv holds 7,512"
    ),
    ("bivlc", "section 3.1 text", "BiVLC", "instances after step 3"): (
        "the intermediate set after annotation step 3 is not released"
    ),
}


# --- published values and the comparison ---------------------------------------------------------


def published_path(paper: str) -> Path:
    """Path of a paper's published_statistics.csv inside the installed package."""
    if paper not in PAPERS:
        raise ValueError(f"no published statistics for {paper!r}; expected one of {PAPERS}")
    return Path(str(resources.files(f"itmbench.papers.{paper}").joinpath("published_statistics.csv")))


def _decimals(text: str) -> int:
    """Number of decimals printed in a published number ('1.42' -> 2, '267095' -> 0)."""
    return len(text.split(".", 1)[1]) if "." in text else 0


def read_published(path: str | os.PathLike) -> pd.DataFrame:
    """Read a published_statistics.csv (table,row,column,value,source), keeping each value's decimals."""
    cols: dict[str, list] = {name: [] for name in PUBLISHED_SCHEMA}
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames != ["table", "row", "column", "value", "source"]:
            raise ValueError(f"{path}: line 1: expected header table,row,column,value,source, got {reader.fieldnames}")
        seen: dict[tuple[str, str, str], int] = {}
        for record in reader:
            line = reader.line_num
            key = (record["table"], record["row"], record["column"])
            if key in seen:
                raise ValueError(f"{path}: line {line}: {key} already given on line {seen[key]}")
            seen[key] = line
            text = (record["value"] or "").strip()
            try:
                value = float(text)
            except ValueError:
                raise ValueError(
                    f"{path}: line {line}: expected a plain number in column value, got {text!r}"
                ) from None
            for name in ("table", "row", "column"):
                cols[name].append(record[name])
            cols["value"].append(value)
            cols["decimals"].append(_decimals(text))
            cols["source"].append(record["source"])
    return typed_frame(cols, PUBLISHED_SCHEMA)


def load_published(paper: str) -> pd.DataFrame:
    """A paper's published statistics (table, row, column, value, decimals, source)."""
    return read_published(published_path(paper))


def regenerated_frame(rows: list[tuple[str, str, str, float, str]]) -> pd.DataFrame:
    """Regenerated numbers from (table, row, column, value, regenerated_from) tuples."""
    names = ("table", "row", "column", "regenerated", "regenerated_from")
    return typed_frame(
        {name: [row[i] for row in rows] for i, name in enumerate(names)},
        {"table": STRING, "row": STRING, "column": STRING, "regenerated": FLOAT, "regenerated_from": STRING},
    )


def compare_with_published(
    regenerated: pd.DataFrame, published: pd.DataFrame, paper: str | None = None
) -> pd.DataFrame:
    """Outer-join regenerated and published numbers on (table, row, column); difference and status per row."""
    keys = ["table", "row", "column"]
    left = published.assign(_published_order=np.arange(len(published)))
    right = regenerated.assign(_regenerated_order=np.arange(len(regenerated)))
    merged = left.merge(right, on=keys, how="outer", sort=False)
    merged = merged.sort_values(["_published_order", "_regenerated_order"], na_position="last", kind="stable")
    out: dict[str, list] = {name: [] for name in COMPARISON_SCHEMA}
    for record in merged.to_dict("records"):
        value, decimals = record["value"], record["decimals"]
        regen = record["regenerated"]
        has_published = not pd.isna(value)
        has_regenerated = not pd.isna(regen)
        difference = float("nan")
        if has_published and has_regenerated:
            difference = round(float(regen), int(decimals)) - float(value)
            difference = round(difference, int(decimals) + 6)
            status = AGREE if difference == 0 else DISAGREE
        elif has_published:
            status = NOT_IN_FILES
        else:
            status = NOT_PUBLISHED
        note = NOTES.get((paper, record["table"], record["row"], record["column"]), "") if paper else ""
        out["table"].append(record["table"])
        out["row"].append(record["row"])
        out["column"].append(record["column"])
        out["regenerated_from"].append("" if pd.isna(record["regenerated_from"]) else record["regenerated_from"])
        out["published"].append(float(value) if has_published else float("nan"))
        out["regenerated"].append(float(regen) if has_regenerated else float("nan"))
        out["difference"].append(difference)
        out["status"].append(status)
        out["note"].append(note if status != AGREE else "")
        out["source"].append("" if pd.isna(record["source"]) else record["source"])
    return typed_frame(out, COMPARISON_SCHEMA)


# --- CxC ---------------------------------------------------------------------------------------

_CXC_TASK_LABEL = {"sts": "STS", "sis": "SIS", "sits": "SITS"}
_CXC_SPLIT_LABEL = {"val": "Validation", "test": "Test"}


def cxc_regenerated(
    raw: Mapping[tuple[str, str], pd.DataFrame], thresholds: cxc_source.CxcThresholds = cxc_source.CxcThresholds()
) -> pd.DataFrame:
    """CxC numbers regenerated from the raw rating tables {(task, split): read_cxc_csv(...)}."""
    rows: list[tuple[str, str, str, float, str]] = []
    files = "{sts,sis,sits}_{val,test}.csv rows"
    table1 = "appendix Table 1"
    for split in cxc_source.SPLITS:
        for task in cxc_source.TASKS:
            rows.append((table1, _CXC_SPLIT_LABEL[split], _CXC_TASK_LABEL[task], len(raw[task, split]), files))
        total = sum(len(raw[task, split]) for task in cxc_source.TASKS)
        rows.append((table1, _CXC_SPLIT_LABEL[split], "Total (per split)", total, files))
    for task in cxc_source.TASKS:
        total = sum(len(raw[task, split]) for split in cxc_source.SPLITS)
        rows.append((table1, "Total (per task)", _CXC_TASK_LABEL[task], total, files))
    grand = sum(len(table) for table in raw.values())
    rows.append((table1, "Total (per task)", "Total (per split)", grand, files))
    rows.append(("abstract", "all tasks and splits", "rated pairs", grand, files))
    for split in cxc_source.SPLITS:
        sits = raw["sits", split]
        original = sits[sits["sampling_method"] == "c2i_original"]
        label = _CXC_SPLIT_LABEL[split]
        source = f"sits_{split}.csv rows with sampling_method c2i_original"
        rows.append(("section 2 text", label, "MS-COCO image-caption pairs rated", len(original), source))
        rows.append(("section 1 text", label, "captions", original["caption_id"].nunique(), source))
        rows.append(("section 1 text", label, "images", original["image_id"].nunique(), source))
    isim = 0
    for split in cxc_source.SPLITS:
        sts = raw["sts", split]
        isim += int(((sts["sampling_method"] == "c2c_isim") & (sts["agg_score"] >= thresholds.sts)).sum())
    rows.append(
        (
            "section 3 text",
            "STS other-modality sampling",
            "positive pairs",
            isim,
            f"sts_{{val,test}}.csv c2c_isim rows with agg_score >= {thresholds.sts:g}",
        )
    )
    return regenerated_frame(rows)


def cxc_statistics(
    raw: Mapping[tuple[str, str], pd.DataFrame], thresholds: cxc_source.CxcThresholds = cxc_source.CxcThresholds()
) -> pd.DataFrame:
    """CxC appendix Table 1 and the dataset numbers of the text, beside the published values."""
    return compare_with_published(cxc_regenerated(raw, thresholds), load_published("cxc"), "cxc")


def cxc_rating_histogram(tables: Mapping[tuple[str, str], pd.DataFrame], bin_width: float = 0.5) -> pd.DataFrame:
    """Counts of mean ratings per score bin, per task, split and sampling (the paper's Fig. 3).

    Sampling is 'intramodal sampling' (other-modality selection), 'same example' (original
    MS-COCO pairs: co-captions for STS, image-caption pairs for SITS) or 'all'. Bins are
    [left, left + bin_width), the last one closed at 5. Columns: task, split, sampling: string,
    bin_left, bin_right: float64, count: int64, share: float64 (of the group).
    """
    low, high = cxc_source.SCORE_RANGE
    n_bins = int(round((high - low) / bin_width))
    if n_bins <= 0 or not np.isclose(n_bins * bin_width, high - low):
        raise ValueError(f"bin_width must divide the score range {low}-{high}, got {bin_width}")
    edges = low + bin_width * np.arange(n_bins + 1)
    cols: dict[str, list] = {
        name: [] for name in ("task", "split", "sampling", "bin_left", "bin_right", "count", "share")
    }
    for (task, split), table in tables.items():
        same = table["sampling_method"].isin(cxc_source.SAME_EXAMPLE_METHODS)
        groups = {"intramodal sampling": table[~same], "same example": table[same], "all": table}
        for sampling, group in groups.items():
            if sampling != "all" and group.empty:
                continue
            index = np.clip(np.floor((group["agg_score"].to_numpy() - low) / bin_width).astype(int), 0, n_bins - 1)
            counts = np.bincount(index, minlength=n_bins)
            for b in range(n_bins):
                cols["task"].append(task)
                cols["split"].append(split)
                cols["sampling"].append(sampling)
                cols["bin_left"].append(float(edges[b]))
                cols["bin_right"].append(float(edges[b + 1]))
                cols["count"].append(int(counts[b]))
                cols["share"].append(float(counts[b] / len(group)) if len(group) else float("nan"))
    schema = {
        "task": STRING,
        "split": STRING,
        "sampling": STRING,
        "bin_left": FLOAT,
        "bin_right": FLOAT,
        "count": INT,
        "share": FLOAT,
    }
    return typed_frame(cols, schema)


def cxc_positives_per_item(
    tables: Mapping[tuple[str, str], pd.DataFrame], thresholds: cxc_source.CxcThresholds = cxc_source.CxcThresholds()
) -> pd.DataFrame:
    """Distribution of the number of positive partners per rated item (the paper's Fig. 4).

    Items are those rated in the task and split (so 0 counts items with no positive). STS counts
    caption partners per caption, SIS image partners per image (both symmetric), SITS images per
    caption and captions per image. Columns: task, split, item: string, n_positives: int64,
    n_items: int64.
    """
    cols: dict[str, list] = {name: [] for name in ("task", "split", "item", "n_positives", "n_items")}
    for (task, split), table in tables.items():
        a, b = cxc_source.ITEM_COLUMNS[task]
        positive = table["agg_score"] >= thresholds.for_task(task)
        if task in cxc_source.SYMMETRIC_TASKS:
            items = pd.concat([table[f"{a}_id"], table[f"{b}_id"]])
            hits = pd.concat([table.loc[positive, f"{a}_id"], table.loc[positive, f"{b}_id"]])
            per_kind = {"caption" if task == "sts" else "image": (items, hits)}
        else:
            per_kind = {
                "caption": (table["caption_id"], table.loc[positive, "caption_id"]),
                "image": (table["image_id"], table.loc[positive, "image_id"]),
            }
        for kind, (items, hits) in per_kind.items():
            counts = hits.value_counts().reindex(items.unique(), fill_value=0)
            distribution = counts.value_counts().sort_index()
            for n_positives, n_items in distribution.items():
                cols["task"].append(task)
                cols["split"].append(split)
                cols["item"].append(kind)
                cols["n_positives"].append(int(n_positives))
                cols["n_items"].append(int(n_items))
    return typed_frame(cols, {"task": STRING, "split": STRING, "item": STRING, "n_positives": INT, "n_items": INT})


# --- MCIC --------------------------------------------------------------------------------------


def mcic_regenerated(splits: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """MCIC Table 1 numbers regenerated from the split tables given ({'dev': ..., 'test': ...})."""
    rows: list[tuple[str, str, str, float, str]] = []
    for split, table in splits.items():
        source = f"mc_mscoco_{split}.txt"
        rows.append(("Table 1", split, "#unique images", table["image"].nunique(), source))
        rows.append(("Table 1", split, "# instances", len(table), source))
    if {"dev", "test", "train"} <= set(splits):
        images = pd.concat([splits[name]["image"] for name in ("dev", "test", "train")]).nunique()
        instances = sum(len(splits[name]) for name in ("dev", "test", "train"))
        rows.append(("Table 1", "total", "#unique images", images, "mc_mscoco_{dev,test,train}.txt"))
        rows.append(("Table 1", "total", "# instances", instances, "mc_mscoco_{dev,test,train}.txt"))
        rows.append(("section 3.3 text", "all splits", "instances", instances, "mc_mscoco_{dev,test,train}.txt"))
    return regenerated_frame(rows)


def mcic_statistics(splits: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """MCIC-COCO Table 1 beside the published values (train and total need the unmirrored train split)."""
    return compare_with_published(mcic_regenerated(splits), load_published("mcic"), "mcic")


def mcic_answer_prior(splits: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Share of each answer position per split: the accuracy of always answering that position.

    The options are sorted alphabetically, so positions are not uniform (chance is 20%).
    Columns: split: string, answer_index: int64, count: int64, n: int64, share: float64,
    accuracy_always (x100): float64, uniform: float64 (20.0), difference (accuracy - uniform): float64.
    """
    cols: dict[str, list] = {
        name: []
        for name in ("split", "answer_index", "count", "n", "share", "accuracy_always", "uniform", "difference")
    }
    uniform = 100.0 / mcic_source.N_OPTIONS
    for split, table in splits.items():
        counts = table["answer_index"].value_counts().reindex(range(mcic_source.N_OPTIONS), fill_value=0)
        for index, count in counts.items():
            share = count / len(table) if len(table) else float("nan")
            cols["split"].append(split)
            cols["answer_index"].append(int(index))
            cols["count"].append(int(count))
            cols["n"].append(len(table))
            cols["share"].append(float(share))
            cols["accuracy_always"].append(100.0 * float(share))
            cols["uniform"].append(uniform)
            cols["difference"].append(100.0 * float(share) - uniform)
    schema = {
        "split": STRING,
        "answer_index": INT,
        "count": INT,
        "n": INT,
        "share": FLOAT,
        "accuracy_always": FLOAT,
        "uniform": FLOAT,
        "difference": FLOAT,
    }
    return typed_frame(cols, schema)


# --- ECCV Caption ------------------------------------------------------------------------------

_ECCV_LABEL = {"original": "Original MS-COCO Caption", "cxc": "CxC", "eccv": "ECCV Caption"}


def eccv_positive_counts(positives: pd.DataFrame) -> pd.DataFrame:
    """Positives of each source summed over ECCV's query sets (what Table 3 counts).

    The query sets are the keys of ECCV's files: 1,332 caption queries (eccv_caption_to_image) and
    1,261 image queries (eccv_image_to_caption). '# positive images' sums, over the caption queries,
    the images a source lists for the caption; '# positive captions' sums, over the image queries,
    the captions it lists for the image. Columns: source, dataset: string, n_query_captions,
    n_positive_images, n_query_images, n_positive_captions: int64.
    """
    eccv = positives[positives["source"] == "eccv"]
    query_captions = set(eccv.loc[eccv["direction"] == "caption_to_image", "caption_id"])
    query_images = set(eccv.loc[eccv["direction"] == "image_to_caption", "image_id"])
    cols: dict[str, list] = {
        name: []
        for name in (
            "source",
            "dataset",
            "n_query_captions",
            "n_positive_images",
            "n_query_images",
            "n_positive_captions",
        )
    }
    for source in ("original", "cxc", "eccv"):
        table = positives[positives["source"] == source]
        c2i = table[table["direction"] == "caption_to_image"]
        i2c = table[table["direction"] == "image_to_caption"]
        cols["source"].append(source)
        cols["dataset"].append(_ECCV_LABEL[source])
        cols["n_query_captions"].append(len(query_captions))
        cols["n_positive_images"].append(int(c2i["caption_id"].isin(query_captions).sum()))
        cols["n_query_images"].append(len(query_images))
        cols["n_positive_captions"].append(int(i2c["image_id"].isin(query_images).sum()))
    schema = {
        "source": STRING,
        "dataset": STRING,
        "n_query_captions": INT,
        "n_positive_images": INT,
        "n_query_images": INT,
        "n_positive_captions": INT,
    }
    return typed_frame(cols, schema)


def eccv_regenerated(positives: pd.DataFrame) -> pd.DataFrame:
    """ECCV Table 3 and the query counts of the text, regenerated from the association files."""
    counts = eccv_positive_counts(positives).set_index("source")
    rows: list[tuple[str, str, str, float, str]] = []
    base_images = counts.loc["original", "n_positive_images"]
    base_captions = counts.loc["original", "n_positive_captions"]
    for source in ("original", "cxc", "eccv"):
        label = _ECCV_LABEL[source]
        files = f"{source}_{{caption_to_image,image_to_caption}}.json over ECCV's query sets"
        images = counts.loc[source, "n_positive_images"]
        captions = counts.loc[source, "n_positive_captions"]
        rows.append(("Table 3", label, "# positive images", images, files))
        rows.append(("Table 3", label, "# positive captions", captions, files))
        if source != "original":
            rows.append(("Table 3", label, "# positive images (x original)", images / base_images, files))
            rows.append(("Table 3", label, "# positive captions (x original)", captions / base_captions, files))
    n_captions = counts.loc["eccv", "n_query_captions"]
    n_images = counts.loc["eccv", "n_query_images"]
    keys = "keys of eccv_caption_to_image.json / eccv_image_to_caption.json"
    for table, row in (("Table 3 caption", "queries"), ("section 3.2 text", "subsampled queries")):
        rows.append((table, row, "# query captions", n_captions, keys))
        rows.append((table, row, "# query images", n_images, keys))
    per_query = "eccv_*.json positives per query"
    rows.append(
        (
            "section 1 text",
            "ECCV Caption",
            "positive captions per image query",
            counts.loc["eccv", "n_positive_captions"] / n_images,
            per_query,
        )
    )
    rows.append(
        (
            "section 1 text",
            "ECCV Caption",
            "positive images per caption query",
            counts.loc["eccv", "n_positive_images"] / n_captions,
            per_query,
        )
    )
    return regenerated_frame(rows)


def eccv_statistics(positives: pd.DataFrame) -> pd.DataFrame:
    """ECCV Caption Table 3 (and query counts) beside the published values."""
    return compare_with_published(eccv_regenerated(positives), load_published("eccv"), "eccv")


# --- BiVLC / SugarCrepe ------------------------------------------------------------------------

_SUBSET_LABEL = {
    subset: " ".join(part.capitalize() for part in subset.split("_")) for subset in sugarcrepe_source.SUBSETS
}


def subtype_counts(instances: pd.DataFrame) -> dict[str, int]:
    """Instances per SugarCrepe subset label ('Replace Obj', ...) and 'Total', from type/subtype columns."""
    subsets = instances["type"].astype(str) + "_" + instances["subtype"].astype(str)
    counts = subsets.value_counts()
    out = {_SUBSET_LABEL[subset]: int(counts.get(subset, 0)) for subset in sugarcrepe_source.SUBSETS}
    out["Total"] = len(instances)
    return out


def bivlc_regenerated(sugarcrepe: Mapping[str, pd.DataFrame], bivlc: pd.DataFrame | None) -> pd.DataFrame:
    """BiVLC Table 1 and the text's counts: SugarCrepe per subtype (one row set per source given) and BiVLC.

    `sugarcrepe` maps a label of where the instances come from to an instances table; `bivlc` is
    any table with one row per BiVLC instance and type/subtype columns (a released result file or
    the Hugging Face table). BiVLC's Table 1 counts retrieval examples: 4 per instance.
    """
    rows: list[tuple[str, str, str, float, str]] = []
    for label, table in sugarcrepe.items():
        for column, count in subtype_counts(table).items():
            rows.append(("Table 1", "SugarCrepe", column, count, label))
    if bivlc is not None:
        source = "BiVLC instances x 4 retrieval examples (released per-instance results)"
        for column, count in subtype_counts(bivlc).items():
            rows.append(("Table 1", "BiVLC (ours)", column, 4 * count, source))
        n = len(bivlc)
        rows.append(("section 3.1 text", "BiVLC", "instances", n, "rows of a released BiVLC result file"))
        rows.append(("section 3.1 text", "BiVLC", "retrieval instances", 4 * n, "4 x instances"))
        n_sugarcrepe = max(len(table) for table in sugarcrepe.values()) if sugarcrepe else 0
        if n_sugarcrepe:
            removed = 100.0 * (n_sugarcrepe - n) / n_sugarcrepe
            rows.append(
                (
                    "section 3.1 text",
                    "BiVLC",
                    "instances removed by annotation (%)",
                    removed,
                    "1 - BiVLC instances / SugarCrepe instances",
                )
            )
    return regenerated_frame(rows)


def bivlc_statistics(sugarcrepe: Mapping[str, pd.DataFrame], bivlc: pd.DataFrame | None) -> pd.DataFrame:
    """BiVLC Table 1 (SugarCrepe and BiVLC counts per subtype) beside the published values."""
    return compare_with_published(bivlc_regenerated(sugarcrepe, bivlc), load_published("bivlc"), "bivlc")


# --- everything from a mirror ------------------------------------------------------------------


def statistics_from_mirror(paper: str, mirror: str | os.PathLike) -> pd.DataFrame:
    """Regenerate one paper's dataset statistics from the released files in a mirror folder."""
    if paper == "cxc":
        raw = {
            (task, split): cxc_source.read_cxc_csv(resolve(f"cxc_{task}_{split}", mirror, must_exist=True), task, split)
            for task in cxc_source.TASKS
            for split in cxc_source.SPLITS
        }
        return cxc_statistics(raw)
    if paper == "mcic":
        splits = {
            split: mcic_source.read_mcic_txt(resolve(f"mcic_{split}", mirror, must_exist=True), split)
            for split in ("dev", "test")
        }
        return mcic_statistics(splits)
    if paper == "eccv":
        frames = [
            eccv_source.read_association_json(
                resolve(f"eccv_{source}_{direction}", mirror, must_exist=True), source, direction
            )
            for source in eccv_source.SOURCES
            for direction in eccv_source.DIRECTIONS
        ]
        return eccv_statistics(pd.concat(frames, ignore_index=True))
    if paper == "bivlc":
        subsets = [
            sugarcrepe_source.read_sugarcrepe_json(resolve(f"sugarcrepe_{subset}", mirror, must_exist=True), subset)
            for subset in sugarcrepe_source.SUBSETS
        ]
        sugarcrepe = {
            "RAIVNLab/sugar-crepe data/*.json": pd.concat(subsets, ignore_index=True),
            "BiVLC copy source_data/SugarCrepe/test_SugarCrepe.csv": bivlc_source.read_sugarcrepe_csv(
                resolve("bivlc_sugarcrepe_test", mirror, must_exist=True)
            ),
        }
        results = bivlc_source.read_bivlc_results(resolve("bivlc_results_vit_b_32", mirror, must_exist=True))
        return bivlc_statistics(sugarcrepe, results)
    raise ValueError(f"no dataset statistics for {paper!r}; expected one of {PAPERS}")
