"""The released benchmarks on real COCO: the world's canonical tables, from the released files + COCO items.

The `coco` source builds no benchmark by its paper's procedure: the papers released the result of
theirs. Each paper's `itmbench.papers.<paper>.coco.from_released(raw_dir, items, cfg)`
(`itmbench.sources.coco_registry.COCO_BENCHMARKS` names the paper; this module holds what the builds
share: the COCO items, added items, the id checks) reads a benchmark's released files (under `data/raw`, at
`itmbench.sources.fetch.raw_path(key)`), maps every released id onto the COCO items
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
- cxc: `{sts,sis,sits}_{val,test}.csv`; captions `COCO_val2014:sentid:N`: N is the COCO caption
  annotation id (every caption of sits_test.csv is among coco_test_ids.npy's annotation ids, and a
  quarter of sts_val.csv's exceed the largest Karpathy sentid), checked against the items'
  caption_id; images (Karpathy file names) -> image_id through file_name. Tables:
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
- aro: VG-Relation's and VG-Attribution's JSON lists (`visual_genome_{relation,attribution}.json`: per item
  `image_path`, the box `bbox_x/y/w/h`, `true_caption`, `false_caption`, and `relation_name` or the two
  `attributes`) and `vgr_vga_images.zip` (`images/<image_path>`): each item's image cropped to its box as the
  authors' `__getitem__` does, an added image (PNG; identical crops once), its two captions added texts.
  Tables: instances, options, items. Left out: candidates (construction) and the Order sets, which no
  released file holds (the authors draw their perturbations at load time; docs/aro.md says why they are
  not built on COCO here).
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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from itmbench.io import write_bytes, write_parquet
from itmbench.reading import read_parquet_file

EXTRA_DIR = "extra_items"
IMAGE_COLUMNS = ("image_id", "file_name", "coco_split", "split", "path")
CAPTION_COLUMNS = ("caption_id", "sentid", "image_id", "split", "text")
KARPATHY_SPLITS = ("train", "restval", "val", "test")
GALLERY_CAPTIONS = ("coco_test_ids", "split")
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
        return CocoItems(read_parquet_file(paths[0]), read_parquet_file(paths[1]), str(paths[0]), str(paths[1]))

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


def check_gallery(name: str, gallery: str, split: str) -> None:
    """A gallery_captions setting checked against the split (the 25,000 coco_test_ids are test captions)."""
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


def released_path(key: str, raw_dir: str | Path) -> Path:
    from itmbench.sources.fetch import raw_path

    path = raw_path(key, raw_dir)
    if not path.exists():
        raise FileNotFoundError(f"{path}: missing; expected the released file {key!r} (fetch it: itmbench fetch)")
    return path


def items_table(first: tuple[str, np.ndarray], second: tuple[str, np.ndarray], dtype: str = "string") -> pd.DataFrame:
    """(kind, item_id): two kinds' ids, each unique and sorted, `first` first."""
    parts = [(kind, np.unique(np.asarray(ids, dtype=np.int64))) for kind, ids in (first, second)]
    return pd.DataFrame(
        {
            "kind": pd.array([k for k, ids in parts for _ in range(len(ids))], dtype=dtype),
            "item_id": np.concatenate([ids for _, ids in parts]).astype(np.int64),
        }
    )


def gallery_captions(items: CocoItems, split: str, gallery: str, raw_dir: str | Path) -> tuple[np.ndarray, Path | None]:
    """Caption ids of a split's gallery: the 25,000 of coco_test_ids.npy, or every caption of the split."""
    if gallery == "split":
        return items.split_captions(split)["caption_id"].to_numpy(np.int64), None
    from itmbench.papers.eccv.released import read_coco_test_ids

    path = released_path("eccv_coco_test_ids", raw_dir)
    ids = read_coco_test_ids(path)
    items.require_caption_ids(ids, path, lambda i: f"index {i}")
    return ids, path


def require_in(ids: np.ndarray, allowed: np.ndarray, file: Any, record: Record, what: str, expected: str) -> None:
    """Every id among `allowed`, else an error naming the first record that is not."""
    ok = np.isin(np.asarray(ids, dtype=np.int64), allowed)
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        raise UnmappedRecordError(f"{file}: {record(i)}: {what} {int(ids[i])} is not {expected}")
