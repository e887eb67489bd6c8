"""The released benchmarks on real COCO: the world's canonical tables, from the released files + COCO items.

The `coco` source builds no benchmark by its paper's procedure: the papers released the result of
theirs. Each `from_released(raw_dir, items, cfg)` reads a benchmark's released files (under
`data/raw`, at `itmbench.sources.fetch.raw_path(key)`), maps every released id onto the COCO items
(`itmbench coco-items`: images.parquet and captions.parquet) and returns the tables that the
benchmark's `score_dual` and `summarize` need, with the columns and dtypes of the world's build, so
embedding, scoring, metrics, tables and reports are shared. Construction-only tables (the world's
stages, audits, per-rater ratings, machine proposals) have no released counterpart and are left out.

How each benchmark maps (an id the items lack is an error naming the file, the record and what was
expected; no record is dropped):
- bison: `bison_annotations.cocoval2014.json`; caption_id and the candidates' image ids are COCO
  ids, checked against the items (and each candidate's file name against the image's). Tables:
  annotations, items. Left out: pairs, stages (stage counts are not released).
- mcic: `mc_mscoco_{dev,test}.txt`; `image` is a COCO file name, but every one is named
  COCO_train2014_<id>.jpg, also the images that are val2014 ones (169 of dev's 2,384 images are in
  CxC's Karpathy val/test files): the image is mapped by its id, and `construction` counts, per
  split, the examples, the images and the images whose released file name is not COCO's. The
  options are lower-cased, tokenised texts, not COCO captions: each distinct text becomes an added
  caption (ids from `id_offset`, split = the first MCIC split that uses it). Tables: examples
  (without the world's world_split), answer_positions, construction (those counts), items. Left
  out: decoys (Algorithm 1's scores are not released).
- eccv: the package files `{eccv,cxc,original}_{image_to_caption,caption_to_image}.json` and
  `coco_test_ids.npy`; ids are COCO ids. The gallery is the 25,000 captions of coco_test_ids.npy
  and their 5,000 images; queries are the keys of the eccv files (1,261 images, 1,332 captions).
  Two of the eccv i2t positives (captions 144675 and 467259) are COCO captions outside the 25,000:
  they are kept, as the eccv_caption package counts them in R, and counted in `stages`. Tables:
  positives, queries, stages (queries and positives per source and direction, and those outside
  the gallery), items. Left out: annotations (the machine proposals and answers) and the
  plausible-match tables (the PM files are not among the released files this project fetches):
  score_dual skips PMRP and summarize says so in its notes.
- cxc: `{sts,sis,sits}_{val,test}.csv`; captions `COCO_val2014:sentid:N` -> caption_id through the
  items' sentid column, images (Karpathy file names) -> image_id through file_name. Tables:
  sts, sis, sits (the loader's columns, duplicates averaged, positives by the thresholds),
  positives (each split's rated positives and its original COCO pairs), config (score_split,
  sits_query), items (the score split's gallery: its images and, for the test split, the 25,000
  captions of coco_test_ids.npy). Left out: stages and the world's per-rater columns (the
  per-rater files are not released).
- bivlc: BiVLC's copy of SugarCrepe (`test_SugarCrepe.csv`, 7,512 instances: COCO val2017 file
  names -> image_id, texts -> added captions) and the Hugging Face parquet shards of BiVLC
  (2,933 instances: both images are taken from the parquet as added images, written as files
  under extra_items/images/, identical bytes once; the four texts as added captions). BiVLC
  reformatted SugarCrepe's captions (paper step 1), so a BiVLC instance is scored on its own
  items (instances.sugarcrepe_id = -1) and its SugarCrepe source row is only recorded
  (instances.sugarcrepe_match, by type, subtype and case- and punctuation-insensitive texts; -1
  when none or several match). Tables: sugarcrepe (without the world's construction columns),
  instances, items. Left out: edits, candidates, stages (generation and annotation records).
- retrieval: COCO 5k (Karpathy test): the split's images and the 25,000 captions of
  coco_test_ids.npy, positives = the original pairs (positive_set 'original'). The COCO 1K folds
  are not produced: the retrieval scorer has no fold support.

Added items (`AddedItems`) go to `<out>/extra_items/` in the items layout: images.parquet
(image_id, split, path: the file under extra_items/images/, as the path given to the command),
captions.parquet (caption_id, split, text). Ids start at the benchmark's `id_offset`, above every
COCO id (caption ids reach about 830k, image ids about 581k).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from itmbench.io import write_bytes, write_parquet
from itmbench.negatives.captions import SUBSETS
from itmbench.params import config_from_section

EXTRA_DIR = "extra_items"
IMAGE_COLUMNS = ("image_id", "file_name", "coco_split", "split", "path")
CAPTION_COLUMNS = ("caption_id", "sentid", "image_id", "split", "text")
KARPATHY_SPLITS = ("train", "restval", "val", "test")
GALLERY_CAPTIONS = ("coco_test_ids", "split")
BIVLC_HF_KEYS = ("bivlc_hf_test_0", "bivlc_hf_test_1")
ECCV_KEYS = (
    "eccv_coco_test_ids",
    *(f"eccv_{s}_{d}" for s in ("eccv", "cxc", "original") for d in ("image_to_caption", "caption_to_image")),
)
Tables = dict[str, pd.DataFrame]
Record = Callable[[int], str]


class UnmappedRecordError(ValueError):
    """A released record names an item the COCO items lack; the message names file, record and expectation."""


# ----------------------------------------------------------------------------------------------
# The COCO items


@dataclass(frozen=True)
class CocoItems:
    """The COCO items tables (images, captions) with the lookups that map released ids onto them."""

    images: pd.DataFrame
    captions: pd.DataFrame
    images_path: str = "images.parquet"
    captions_path: str = "captions.parquet"

    def __post_init__(self) -> None:
        for name, frame, cols, where in (
            ("images", self.images, IMAGE_COLUMNS, self.images_path),
            ("captions", self.captions, CAPTION_COLUMNS, self.captions_path),
        ):
            missing = [c for c in cols if c not in frame.columns]
            if missing:
                raise ValueError(f"{where}: missing columns {missing}; expected the COCO items {name} {list(cols)}")
        for frame, col, where in (
            (self.images, "image_id", self.images_path),
            (self.captions, "caption_id", self.captions_path),
        ):
            dup = frame[col][frame[col].duplicated()]
            if len(dup):
                raise ValueError(f"{where}: {col} {int(dup.iloc[0])} occurs twice; expected unique ids")

    @staticmethod
    def read(items_dir: str | Path) -> CocoItems:
        """Read images.parquet and captions.parquet of an items folder (`itmbench coco-items`)."""
        d = Path(items_dir)
        paths = [d / "images.parquet", d / "captions.parquet"]
        for p in paths:
            if not p.exists():
                raise FileNotFoundError(f"{p}: missing; expected the COCO items folder (run `itmbench coco-items`)")
        return CocoItems(pd.read_parquet(paths[0]), pd.read_parquet(paths[1]), str(paths[0]), str(paths[1]))

    def _lookup(
        self, keys: Sequence[Any], index: pd.Index, values: np.ndarray, file: Any, record: Record, what: str
    ) -> np.ndarray:
        rows = index.get_indexer(pd.Index(list(keys)))
        if (rows < 0).any():
            i = int(np.flatnonzero(rows < 0)[0])
            raise UnmappedRecordError(
                f"{file}: {record(i)}: {what} {list(keys)[i]!r} is not in the COCO items; expected {what}s of "
                f"{self.images_path if 'image' in what else self.captions_path} ({int((rows < 0).sum())} unmapped)"
            )
        return values[rows].astype(np.int64)

    def image_ids_of_files(self, names: Sequence[str], file: Any, record: Record) -> np.ndarray:
        """COCO image ids of COCO 2014 file names (COCO_val2014_000000391895.jpg)."""
        index = pd.Index(self.images["file_name"].astype(str).to_numpy())
        return self._lookup(names, index, self.images["image_id"].to_numpy(), file, record, "image file name")

    def require_image_ids(self, ids: Sequence[int], file: Any, record: Record) -> np.ndarray:
        """The ids, checked to be COCO image ids of the items."""
        index = pd.Index(self.images["image_id"].to_numpy(np.int64))
        return self._lookup([int(i) for i in ids], index, index.to_numpy(), file, record, "image id")

    def require_caption_ids(self, ids: Sequence[int], file: Any, record: Record) -> np.ndarray:
        """The ids, checked to be COCO caption ids of the items."""
        index = pd.Index(self.captions["caption_id"].to_numpy(np.int64))
        return self._lookup([int(i) for i in ids], index, index.to_numpy(), file, record, "caption id")

    def caption_ids_of_sentids(self, sentids: Sequence[int], file: Any, record: Record) -> np.ndarray:
        """COCO caption ids of Karpathy sentids (the items' sentid column)."""
        known = self.captions[self.captions["sentid"].to_numpy(np.int64) >= 0]
        index = pd.Index(known["sentid"].to_numpy(np.int64))
        values = known["caption_id"].to_numpy(np.int64)
        return self._lookup([int(s) for s in sentids], index, values, file, record, "caption sentid")

    def image_of_caption(self, caption_ids: np.ndarray) -> np.ndarray:
        """The image id of each (known) caption id."""
        index = pd.Index(self.captions["caption_id"].to_numpy(np.int64))
        return self.captions["image_id"].to_numpy(np.int64)[index.get_indexer(caption_ids)]

    def split_images(self, split: str) -> np.ndarray:
        """Sorted image ids of a Karpathy split."""
        return np.sort(self.images.loc[self.images["split"] == split, "image_id"].to_numpy(np.int64))

    def split_captions(self, split: str) -> pd.DataFrame:
        """(caption_id, image_id) of a Karpathy split's captions, by caption id."""
        caps = self.captions.loc[self.captions["split"] == split, ["caption_id", "image_id"]]
        return caps.astype("int64").sort_values("caption_id", kind="stable", ignore_index=True)


# ----------------------------------------------------------------------------------------------
# Added items


def image_extension(data: bytes) -> str:
    """'png' or 'jpg' from an image's magic bytes ('' when neither)."""
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return "png"
    if data[:3] == b"\xff\xd8\xff":
        return "jpg"
    return ""


class AddedItems:
    """New images and texts a benchmark adds (not among COCO's), with ids from `offset`, each distinct one once."""

    def __init__(self, offset: int) -> None:
        self.offset = int(offset)
        self._captions: dict[str, tuple[int, str]] = {}
        self._images: dict[str, tuple[int, str, bytes, str]] = {}

    def caption(self, text: str, split: str) -> int:
        """The id of a text (a new id the first time it is seen)."""
        if text not in self._captions:
            self._captions[text] = (self.offset + len(self._captions), split)
        return self._captions[text][0]

    def image(self, data: bytes, split: str, file: Any, where: str) -> int:
        """The id of an encoded image (PNG or JPEG bytes; identical bytes get one id)."""
        ext = image_extension(data)
        if not ext:
            raise ValueError(f"{file}: {where}: expected PNG or JPEG bytes, got {data[:8]!r}")
        key = hashlib.sha256(data).hexdigest()
        if key not in self._images:
            self._images[key] = (self.offset + len(self._images), split, data, ext)
        return self._images[key][0]

    def caption_table(self) -> pd.DataFrame:
        """caption_id, split, text (by id)."""
        rows = sorted((cid, split, text) for text, (cid, split) in self._captions.items())
        return pd.DataFrame(rows, columns=["caption_id", "split", "text"]).astype({"caption_id": "int64"})

    def image_records(self) -> list[tuple[int, str, bytes, str]]:
        """(image_id, split, bytes, extension) of every added image, by id."""
        return sorted(self._images.values())

    def __len__(self) -> int:
        return len(self._captions) + len(self._images)


def write_extra_items(added: AddedItems, out_dir: str | Path) -> Path:
    """Write `<out>/extra_items/` atomically: the image files, images.parquet (with path), captions.parquet."""
    d = Path(out_dir) / EXTRA_DIR
    rows = []
    for image_id, split, data, ext in added.image_records():
        path = d / "images" / f"{image_id}.{ext}"
        write_bytes(path, data)
        rows.append((image_id, split, str(path)))
    images = pd.DataFrame(rows, columns=["image_id", "split", "path"]).astype({"image_id": "int64"})
    write_parquet(d / "captions.parquet", added.caption_table())
    write_parquet(d / "images.parquet", images)
    return d


# ----------------------------------------------------------------------------------------------
# Configs


@dataclass(frozen=True)
class NoConfig:
    """A benchmark with nothing to choose (bison, eccv)."""


@dataclass(frozen=True)
class McicCocoConfig:
    """MCIC from its released files: which splits, and the first id of the added option texts."""

    SECTION: ClassVar[str] = "coco_benchmarks.mcic"

    splits: tuple[str, ...]
    id_offset: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "splits", tuple(self.splits))
        bad = [s for s in self.splits if s not in ("dev", "test", "train")]
        if bad or not self.splits or len(set(self.splits)) != len(self.splits):
            raise ValueError(f"coco_benchmarks.mcic: splits {list(self.splits)}; expected distinct dev, test, train")
        if self.id_offset < 1:
            raise ValueError(f"coco_benchmarks.mcic: id_offset {self.id_offset}; expected a positive integer")


@dataclass(frozen=True)
class CxcCocoConfig:
    """CxC from its released files: thresholds, the scored split, the SITS bootstrap side, the gallery captions."""

    SECTION: ClassVar[str] = "coco_benchmarks.cxc"

    threshold_sts: float
    threshold_sis: float
    threshold_sits: float
    score_split: str
    sits_query: str
    gallery_captions: str

    def __post_init__(self) -> None:
        if self.score_split not in ("val", "test"):
            raise ValueError(f"coco_benchmarks.cxc: score_split {self.score_split!r}; expected 'val' or 'test'")
        if self.sits_query not in ("image", "caption"):
            raise ValueError(f"coco_benchmarks.cxc: sits_query {self.sits_query!r}; expected 'image' or 'caption'")
        _check_gallery("cxc", self.gallery_captions, self.score_split)


@dataclass(frozen=True)
class BivlcCocoConfig:
    """BiVLC from its released files: the first id of the added images and texts."""

    SECTION: ClassVar[str] = "coco_benchmarks.bivlc"

    id_offset: int

    def __post_init__(self) -> None:
        if self.id_offset < 1:
            raise ValueError(f"coco_benchmarks.bivlc: id_offset {self.id_offset}; expected a positive integer")


@dataclass(frozen=True)
class SugarCrepeCocoConfig:
    """SugarCrepe from its released files: the first id of its caption texts, added as new items."""

    SECTION: ClassVar[str] = "coco_benchmarks.sugarcrepe"

    id_offset: int

    def __post_init__(self) -> None:
        if self.id_offset < 1:
            raise ValueError(f"coco_benchmarks.sugarcrepe: id_offset {self.id_offset}; expected a positive integer")


@dataclass(frozen=True)
class RetrievalCocoConfig:
    """COCO retrieval: the Karpathy split and which of its captions form the gallery."""

    SECTION: ClassVar[str] = "coco_benchmarks.retrieval"

    split: str
    gallery_captions: str

    def __post_init__(self) -> None:
        if self.split not in KARPATHY_SPLITS:
            raise ValueError(f"coco_benchmarks.retrieval: split {self.split!r}; expected one of {KARPATHY_SPLITS}")
        _check_gallery("retrieval", self.gallery_captions, self.split)


def _check_gallery(name: str, gallery: str, split: str) -> None:
    if gallery not in GALLERY_CAPTIONS:
        raise ValueError(f"coco_benchmarks.{name}: gallery_captions {gallery!r}; expected one of {GALLERY_CAPTIONS}")
    if gallery == "coco_test_ids" and split != "test":
        raise ValueError(f"coco_benchmarks.{name}: gallery_captions 'coco_test_ids' needs split 'test', not {split!r}")


# ----------------------------------------------------------------------------------------------
# Helpers shared by the builders


@dataclass
class Released:
    """A benchmark from its released files: its canonical tables and the items it adds (None: none)."""

    tables: Tables
    added: AddedItems | None = None
    log: dict[str, Any] = field(default_factory=dict)


def _raw(key: str, raw_dir: str | Path) -> Path:
    from itmbench.sources.fetch import raw_path

    path = raw_path(key, raw_dir)
    if not path.exists():
        raise FileNotFoundError(f"{path}: missing; expected the released file {key!r} (fetch it: itmbench fetch)")
    return path


def _items_table(first: tuple[str, np.ndarray], second: tuple[str, np.ndarray], dtype: str = "string") -> pd.DataFrame:
    """(kind, item_id): two kinds' ids, each unique and sorted, `first` first."""
    parts = [(kind, np.unique(np.asarray(ids, dtype=np.int64))) for kind, ids in (first, second)]
    return pd.DataFrame(
        {
            "kind": pd.array([k for k, ids in parts for _ in range(len(ids))], dtype=dtype),
            "item_id": np.concatenate([ids for _, ids in parts]).astype(np.int64),
        }
    )


def _gallery_captions(
    items: CocoItems, split: str, gallery: str, raw_dir: str | Path
) -> tuple[np.ndarray, Path | None]:
    """Caption ids of a split's gallery: the 25,000 of coco_test_ids.npy, or every caption of the split."""
    if gallery == "split":
        return items.split_captions(split)["caption_id"].to_numpy(np.int64), None
    from itmbench.papers.eccv.released import read_coco_test_ids

    path = _raw("eccv_coco_test_ids", raw_dir)
    ids = read_coco_test_ids(path)
    items.require_caption_ids(ids, path, lambda i: f"index {i}")
    return ids, path


def _require_in(ids: np.ndarray, allowed: np.ndarray, file: Any, record: Record, what: str, expected: str) -> None:
    """Every id among `allowed`, else an error naming the first record that is not."""
    ok = np.isin(np.asarray(ids, dtype=np.int64), allowed)
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        raise UnmappedRecordError(f"{file}: {record(i)}: {what} {int(ids[i])} is not {expected}")


# ----------------------------------------------------------------------------------------------
# Builders


def bison_from_released(raw_dir: str | Path, items: CocoItems, cfg: NoConfig) -> Released:
    """BISON's annotations with every image and caption id checked against the COCO items."""
    from itmbench.papers.bison import benchmark as bison
    from itmbench.papers.bison.released import ANNOTATION_SCHEMA, read_bison_annotations

    path = _raw("bison_annotations", raw_dir)
    ann = read_bison_annotations(path)
    ann.attrs = {}
    bison_ids = ann["bison_id"].to_numpy()

    def record(i: int) -> str:
        return f"data[{i}] (bison_id {int(bison_ids[i])})"

    items.require_caption_ids(ann["caption_id"].to_numpy(), path, record)
    names = dict(zip(items.images["image_id"].to_numpy(np.int64), items.images["file_name"].astype(str)))
    for k in (0, 1):
        ids = items.require_image_ids(ann[f"image_id_{k}"].to_numpy(), path, record)
        given = ann[f"image_filename_{k}"].astype(str).to_numpy()
        off = [i for i, (image_id, name) in enumerate(zip(ids, given)) if names[int(image_id)] != name]
        if off:
            i = off[0]
            raise UnmappedRecordError(
                f"{path}: {record(i)}.image_candidates[{k}]: image_filename {given[i]!r}; expected "
                f"{names[int(ids[i])]!r}, the file name of image {int(ids[i])} in {items.images_path}"
            )
    annotations = ann[list(ANNOTATION_SCHEMA)].astype(ANNOTATION_SCHEMA).reset_index(drop=True)
    images = np.concatenate([annotations["image_id_0"].to_numpy(), annotations["image_id_1"].to_numpy()])
    table = _items_table(("caption", annotations["caption_id"].to_numpy()), ("image", images))
    tables = {"annotations": annotations, "items": table.astype(bison.ITEM_COLUMNS)}
    return Released(tables, log={"annotations": len(annotations)})


def mcic_from_released(raw_dir: str | Path, items: CocoItems, cfg: McicCocoConfig) -> Released:
    """MCIC examples of the released splits; images -> COCO ids, option texts -> added captions."""
    from itmbench.papers.mcic import benchmark as mcic
    from itmbench.papers.mcic.released import read_mcic_txt

    added = AddedItems(cfg.id_offset)
    frames, positions, construction = [], [], []
    names = items.images.set_index("image_id")["file_name"].astype(str)
    for split in cfg.splits:
        path = _raw(f"mcic_{split}", raw_dir)
        ex = read_mcic_txt(path, split)
        lines = ex["line"].to_numpy()

        def record(i: int, lines: np.ndarray = lines) -> str:
            return f"line {int(lines[i])} key image"

        # MCIC names every image COCO_train2014_<id>.jpg, val2014 ones too: map by the id, count the others
        ex["image_id"] = items.require_image_ids(ex["image_id"].to_numpy(), path, record)
        renamed = ex.loc[ex["image"].to_numpy() != names.loc[ex["image_id"]].to_numpy(), "image_id"].nunique()
        construction += [
            {"split": split, "stage": "examples", "value": float(len(ex))},
            {"split": split, "stage": "images", "value": float(ex["image_id"].nunique())},
            {"split": split, "stage": "images whose file name is not COCO's (mapped by id)", "value": float(renamed)},
        ]
        ids = [[added.caption(text, split) for text in options] for options in ex["options"]]
        ex["option_caption_ids"] = ids
        ex["caption_id"] = [row[j] for row, j in zip(ids, ex["answer_index"].to_numpy())]
        frames.append(ex)
        counts = np.bincount(ex["answer_index"].to_numpy(np.int64), minlength=mcic.N_OPTIONS)
        for j in range(mcic.N_OPTIONS):
            share = counts[j] / len(ex) if len(ex) else float("nan")
            positions.append({"split": split, "position": j, "n": int(counts[j]), "share": float(share)})
    columns = [c for c in mcic.TABLE_COLUMNS["examples"] if c not in mcic.WORLD_ONLY_COLUMNS]
    examples = pd.concat(frames, ignore_index=True)[columns]
    dtypes = {c: t for c, t in mcic._DTYPES["examples"].items() if c in columns}
    examples = examples.astype(dtypes)
    tables = {
        "examples": examples,
        "answer_positions": pd.DataFrame(positions, columns=mcic.TABLE_COLUMNS["answer_positions"]).astype(
            mcic._DTYPES["positions"]
        ),
        "construction": pd.DataFrame(construction, columns=mcic.TABLE_COLUMNS["construction"]).astype(
            mcic._DTYPES["construction"]
        ),
        "items": mcic.items_of(examples),
    }
    log = {"construction": construction, "added_captions": len(added)}
    return Released(tables, added, log)


def eccv_from_released(raw_dir: str | Path, items: CocoItems, cfg: NoConfig) -> Released:
    """ECCV Caption's packaged positives over the 5k/25k COCO test gallery of coco_test_ids.npy."""
    from itmbench.papers.eccv import benchmark as eccv
    from itmbench.papers.eccv.released import DIRECTIONS, SOURCES, read_association_json

    caption_ids, ids_path = _gallery_captions(items, "test", "coco_test_ids", raw_dir)
    image_ids = np.unique(items.image_of_caption(caption_ids))
    frames, stages = [], []
    for source in SOURCES:
        for direction in DIRECTIONS:
            path = _raw(f"eccv_{source}_{direction}", raw_dir)
            pos = read_association_json(path, source, direction)
            q = pos["image_id" if direction == eccv.I2T else "caption_id"].to_numpy()

            def record(i: int, q: np.ndarray = q) -> str:
                return f"key {str(int(q[i]))!r}"

            _require_in(
                pos["image_id"].to_numpy(), image_ids, path, record, "image id", f"an image of a caption of {ids_path}"
            )
            items.require_caption_ids(pos["caption_id"].to_numpy(), path, record)
            outside = ~np.isin(pos["caption_id"].to_numpy(np.int64), caption_ids)
            stages += [
                (direction, f"{source} positives", len(pos)),
                (
                    direction,
                    f"{source} positives outside the gallery (kept: the package counts them in R)",
                    int(outside.sum()),
                ),
            ]
            frames.append(pos)
    positives = eccv._sort_positives(pd.concat(frames, ignore_index=True))
    queries = []
    for direction in DIRECTIONS:
        sub = positives[(positives["source"] == "eccv") & (positives["direction"] == direction)]
        col = "image_id" if direction == eccv.I2T else "caption_id"
        queries.append(pd.DataFrame({"direction": direction, "query_id": np.unique(sub[col].to_numpy(np.int64))}))
    query_df = pd.concat(queries, ignore_index=True).astype(eccv.QUERY_COLUMNS)
    table = _items_table(("image", image_ids), ("caption", caption_ids)).astype(eccv.ITEM_COLUMNS)
    counts = query_df.groupby("direction", sort=False).size().to_dict()
    stages = [(d, "queries", int(counts.get(d, 0))) for d in DIRECTIONS] + sorted(
        stages, key=lambda r: (DIRECTIONS.index(r[0]), r[1])
    )
    stage_df = pd.DataFrame(stages, columns=list(eccv.STAGE_COLUMNS)).astype(eccv.STAGE_COLUMNS)
    tables = {"positives": positives, "queries": query_df, "stages": stage_df, "items": table}
    outside = {f"{d}: {st}": n for d, st, n in stages if "outside" in st and n}
    return Released(tables, log={"queries": counts, "positives outside the gallery": outside})


def cxc_from_released(raw_dir: str | Path, items: CocoItems, cfg: CxcCocoConfig) -> Released:
    """CxC's rated pairs with COCO ids, its positives, the original pairs and the scored split's gallery."""
    from itmbench.papers.cxc import benchmark as cxc
    from itmbench.papers.cxc.released import ITEM_COLUMNS, SPLITS, TASKS, CxcThresholds, pairs_from_raw, read_cxc_csv

    thresholds = CxcThresholds(sts=cfg.threshold_sts, sis=cfg.threshold_sis, sits=cfg.threshold_sits)
    caption_ids, _ = _gallery_captions(items, cfg.score_split, cfg.gallery_captions, raw_dir)
    image_ids = items.split_images(cfg.score_split)
    _require_in(
        items.image_of_caption(caption_ids),
        image_ids,
        items.captions_path,
        lambda i: f"caption {int(caption_ids[i])}",
        "image id",
        f"an image of the Karpathy {cfg.score_split!r} split",
    )
    per_task: dict[str, list[pd.DataFrame]] = {t: [] for t in TASKS}
    positive_frames = []
    for split in SPLITS:
        for task in TASKS:
            path = _raw(f"cxc_{task}_{split}", raw_dir)
            raw = read_cxc_csv(path, task, split)
            lines = raw["line"].to_numpy()
            for col in ITEM_COLUMNS[task]:

                def record(i: int, col: str = col, lines: np.ndarray = lines) -> str:
                    return f"line {int(lines[i])} column {col}"

                if col.startswith("caption"):
                    raw[f"{col}_id"] = items.caption_ids_of_sentids(raw[f"{col}_id"].to_numpy(), path, record)
                else:
                    raw[f"{col}_id"] = items.image_ids_of_files(raw[col].astype(str).tolist(), path, record)
                if split == cfg.score_split:
                    gallery = caption_ids if col.startswith("caption") else image_ids
                    _require_in(
                        raw[f"{col}_id"].to_numpy(), gallery, path, record, f"{col} id", "in the scored gallery"
                    )
            pairs = pairs_from_raw(raw, task, thresholds)
            per_task[task].append(pairs)
            a, b = ITEM_COLUMNS[task]
            pos = pairs[pairs["positive"]]
            positive_frames.append(
                pd.DataFrame({"split": split, "task": task, "a_id": pos[f"{a}_id"], "b_id": pos[f"{b}_id"]})
            )
        original = items.split_captions(split)
        if split == cfg.score_split:
            original = original[original["caption_id"].isin(caption_ids)]
        positive_frames.append(
            pd.DataFrame(
                {"split": split, "task": "original", "a_id": original["caption_id"], "b_id": original["image_id"]}
            )
        )
    tables: Tables = {t: pd.concat(per_task[t], ignore_index=True) for t in TASKS}
    tables["positives"] = pd.concat(positive_frames, ignore_index=True).astype(cxc.POSITIVE_COLUMNS)
    settings = asdict(cfg)
    tables["config"] = pd.DataFrame(
        {"key": list(settings), "value": [json.dumps(v) for v in settings.values()]}
    ).astype("string")
    tables["items"] = _items_table(("image", image_ids), ("caption", caption_ids))
    pos = tables["positives"]
    log = {f"{t}_positives": pos[pos["task"] == t].groupby("split").size().to_dict() for t in (*TASKS, "original")}
    return Released(tables, log=log)


def _norm(text: str) -> str:
    """Case-, space- and punctuation-insensitive text (BiVLC reformatted SugarCrepe's captions)."""
    return re.sub(r"[^a-z0-9]+", " ", str(text).lower()).strip()


def _image_bytes(value: Any, file: Any, where: str) -> bytes:
    """Encoded bytes of an image cell of the Hugging Face parquet ({bytes, path} struct, or bytes)."""
    data = value.get("bytes") if isinstance(value, Mapping) else value
    if not isinstance(data, (bytes, bytearray)) or not data:
        raise ValueError(f"{file}: {where}: expected an image struct with its bytes, got {str(value)[:80]!r}")
    return bytes(data)


def bivlc_from_released(raw_dir: str | Path, items: CocoItems, cfg: BivlcCocoConfig) -> Released:
    """SugarCrepe (BiVLC's copy) on COCO images and BiVLC's instances with their own images, as added items."""
    from itmbench.papers.bivlc import benchmark as bivlc
    from itmbench.papers.bivlc.released import read_bivlc_table, read_sugarcrepe_csv

    added = AddedItems(cfg.id_offset)
    sc_path = _raw("bivlc_sugarcrepe_test", raw_dir)
    sc = read_sugarcrepe_csv(sc_path)
    names = sc["filename"].to_numpy()
    items.require_image_ids(sc["image_id"].to_numpy(), sc_path, lambda i: f"line {i + 2} column filename {names[i]!r}")
    sc["caption_id"] = np.array([added.caption(t, "test") for t in sc["caption"]], dtype=np.int64)
    sc["negative_caption_id"] = np.array([added.caption(t, "test") for t in sc["negative_caption"]], dtype=np.int64)
    sc["in_bivlc"] = False
    sc["bivlc_id"] = np.full(len(sc), -1, dtype=np.int64)
    columns = [c for c in bivlc.TABLES["sugarcrepe"] if c not in bivlc.WORLD_ONLY_COLUMNS["sugarcrepe"]]
    sugarcrepe = sc[columns].astype({"subset": "str", "type": "str", "subtype": "str", "filename": "str"})
    sugarcrepe = sugarcrepe.astype({"caption": "str", "negative_caption": "str"})

    match: dict[tuple[str, str, str, str], int] = {}
    for row in sc.itertuples(index=False):
        key = (row.type, row.subtype, _norm(row.caption), _norm(row.negative_caption))
        match[key] = -1 if key in match else int(row.id)  # several candidates: no match
    inst: dict[str, list] = {c: [] for c in (*bivlc.TABLES["instances"], "sugarcrepe_match")}
    for key in BIVLC_HF_KEYS:
        path = _raw(key, raw_dir)
        table = read_bivlc_table(path)
        for row in table.itertuples(index=False):
            where = f"row {int(row.id)}"
            inst["id"].append(len(inst["id"]))
            for col in ("image", "negative_image"):
                data = _image_bytes(getattr(row, col), path, f"{where} column {col}")
                inst[col].append(added.image(data, "test", path, f"{where} column {col}"))
            for col in ("caption", "negative_caption", "type", "subtype"):
                inst[col].append(getattr(row, col))
            inst["caption_id"].append(added.caption(row.caption, "test"))
            inst["negative_caption_id"].append(added.caption(row.negative_caption, "test"))
            inst["sugarcrepe_id"].append(-1)
            inst["sugarcrepe_match"].append(
                match.get((row.type, row.subtype, _norm(row.caption), _norm(row.negative_caption)), -1)
            )
    instances = pd.DataFrame(inst).astype(
        {c: "int64" for c in ("id", "image", "negative_image", "caption_id", "negative_caption_id", "sugarcrepe_id")}
        | {"sugarcrepe_match": "int64"}
    )
    images = np.concatenate([sugarcrepe["image_id"].to_numpy(), instances["image"], instances["negative_image"]])
    captions = np.concatenate(
        [
            sugarcrepe["caption_id"].to_numpy(),
            sugarcrepe["negative_caption_id"].to_numpy(),
            instances["caption_id"].to_numpy(),
            instances["negative_caption_id"].to_numpy(),
        ]
    )
    tables = {
        "sugarcrepe": sugarcrepe.reset_index(drop=True),
        "instances": instances,
        "items": _items_table(("image", images), ("caption", captions), dtype="str"),
    }
    log = {
        "sugarcrepe": len(sugarcrepe),
        "bivlc": len(instances),
        "bivlc_matched_to_sugarcrepe": int((instances["sugarcrepe_match"] >= 0).sum()),
        "added_images": len(added.image_records()),
        "added_captions": len(added.caption_table()),
    }
    return Released(tables, added, log)


def _sugarcrepe_from_released(raw_dir: str | Path, items: CocoItems, cfg: SugarCrepeCocoConfig) -> Released:
    """SugarCrepe's 7 released subset files on COCO images (its builder: papers.sugarcrepe.benchmark)."""
    from itmbench.papers.sugarcrepe.benchmark import coco_from_released

    return coco_from_released(raw_dir, items, cfg)


def retrieval_from_released(raw_dir: str | Path, items: CocoItems, cfg: RetrievalCocoConfig) -> Released:
    """COCO 5k retrieval: the Karpathy split's images, its gallery captions, the original pairs as positives."""
    caption_ids, _ = _gallery_captions(items, cfg.split, cfg.gallery_captions, raw_dir)
    caption_ids = np.sort(caption_ids)
    image_ids = items.split_images(cfg.split)
    owners = items.image_of_caption(caption_ids)
    _require_in(
        owners,
        image_ids,
        items.captions_path,
        lambda i: f"caption {int(caption_ids[i])}",
        "image id",
        f"an image of the Karpathy {cfg.split!r} split",
    )
    positives = pd.DataFrame({"image_id": owners, "caption_id": caption_ids, "positive_set": "original"})
    positives = positives.sort_values(["positive_set", "image_id", "caption_id"], kind="stable", ignore_index=True)
    table = _items_table(("image", image_ids), ("caption", caption_ids), dtype="str")
    log = {"images": len(image_ids), "captions": len(caption_ids)}
    return Released({"items": table, "positives": positives}, log=log)


# ----------------------------------------------------------------------------------------------
# Registry


def _write_module(name: str) -> Callable[[Tables, str | Path], None]:
    def write(tables: Tables, out_dir: str | Path) -> None:
        import importlib

        importlib.import_module(f"itmbench.papers.{name}.benchmark").write(tables, out_dir)

    return write


def _write_retrieval(tables: Tables, out_dir: str | Path) -> None:
    from itmbench.papers.retrieval.benchmark import write_retrieval

    write_retrieval(tables["items"], tables["positives"], out_dir)


@dataclass(frozen=True)
class CocoBenchmark:
    """One benchmark of the coco source: its config, its builder from the released files, its writer."""

    name: str
    config_class: type
    from_released: Callable[[str | Path, CocoItems, Any], Released]
    write: Callable[[Tables, str | Path], None]
    released_keys: tuple[str, ...]  # the registry keys it reads (the DAG's inputs of its build)

    def config(self, section: Mapping[str, Any]) -> Any:
        """The typed config of a params section (unknown keys named)."""
        return config_from_section(self.config_class, f"coco_benchmarks.{self.name}", section)


COCO_BENCHMARKS: dict[str, CocoBenchmark] = {
    "bison": CocoBenchmark("bison", NoConfig, bison_from_released, _write_module("bison"), ("bison_annotations",)),
    "mcic": CocoBenchmark("mcic", McicCocoConfig, mcic_from_released, _write_module("mcic"), ("mcic_dev", "mcic_test")),
    "eccv": CocoBenchmark("eccv", NoConfig, eccv_from_released, _write_module("eccv"), ECCV_KEYS),
    "cxc": CocoBenchmark(
        "cxc",
        CxcCocoConfig,
        cxc_from_released,
        _write_module("cxc"),
        ("eccv_coco_test_ids", *(f"cxc_{t}_{s}" for t in ("sts", "sis", "sits") for s in ("val", "test"))),
    ),
    "bivlc": CocoBenchmark(
        "bivlc", BivlcCocoConfig, bivlc_from_released, _write_module("bivlc"), ("bivlc_sugarcrepe_test", *BIVLC_HF_KEYS)
    ),
    "retrieval": CocoBenchmark(
        "retrieval", RetrievalCocoConfig, retrieval_from_released, _write_retrieval, ("eccv_coco_test_ids",)
    ),
    "sugarcrepe": CocoBenchmark(
        "sugarcrepe",
        SugarCrepeCocoConfig,
        _sugarcrepe_from_released,
        _write_module("sugarcrepe"),
        tuple(f"sugarcrepe_{subset}" for subset in SUBSETS),
    ),
}


def coco_benchmark(name: str) -> CocoBenchmark:
    """The coco-source entry of a benchmark, naming the known ones when it is unknown."""
    if name not in COCO_BENCHMARKS:
        raise ValueError(f"unknown coco benchmark {name!r}; expected one of {sorted(COCO_BENCHMARKS)}")
    return COCO_BENCHMARKS[name]


def build_coco_benchmark(
    name: str, raw_dir: str | Path, items_dir: str | Path, section: Mapping[str, Any], out_dir: str | Path
) -> Released:
    """Build one benchmark from its released files and write it: added items first, items.parquet last."""
    entry = coco_benchmark(name)
    cfg = entry.config(section)
    released = entry.from_released(raw_dir, CocoItems.read(items_dir), cfg)
    if released.added is not None:
        write_extra_items(released.added, out_dir)
    entry.write(released.tables, out_dir)
    return released
