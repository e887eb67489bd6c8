"""The embedding cache: one embedding per unique item per model, shared by every benchmark."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from PIL import Image

from itmbench.errors import reading
from itmbench.io import atomic_path
from itmbench.reading import read_parquet_file

if TYPE_CHECKING:
    from itmbench.models.registry import DualEncoder


class ItemStore:
    """Images and caption texts by id: the source's items folder plus the folders of new items
    that benchmarks add (BiVLC's generated images and edited captions), all in one layout.

    A folder holds its images either as one array (`images.npy`, the world) or as files named by
    the `path` column of `images.parquet` (COCO: a JPEG path, or `<zip>::<member>` inside a COCO
    zip); file images are resized (shorter side, bicubic) and centre-cropped to `image_size`,
    as open_clip's own preprocessing does.
    """

    def __init__(
        self, items_dir: str | Path, extra_dirs: Sequence[str | Path] = (), image_size: int | None = None
    ) -> None:
        self.path = Path(items_dir)
        self.image_size = image_size
        self.arrays: list[np.ndarray | FileImages] = []
        self.image_row: dict[int, tuple[int, int]] = {}
        self.caption_text: dict[int, str] = {}
        for d in (self.path, *map(Path, extra_dirs)):
            store = len(self.arrays)
            table = read_parquet_file(d / "images.parquet")
            if (d / "images.npy").exists():
                with reading(d / "images.npy"):
                    self.arrays.append(np.load(d / "images.npy", mmap_mode="r"))
            elif "path" in table.columns:
                self.arrays.append(FileImages(d / "images.parquet", table["path"].tolist(), image_size))
            else:
                raise ValueError(f"{d}: no images.npy and no `path` column in images.parquet; expected one of them")
            for row, image_id in enumerate(table["image_id"].to_numpy()):
                if int(image_id) in self.image_row:
                    raise ValueError(f"{d / 'images.parquet'}: image id {image_id} is already defined elsewhere")
                self.image_row[int(image_id)] = (store, row)
            caps = read_parquet_file(d / "captions.parquet")
            for caption_id, text in zip(caps["caption_id"].to_numpy(), caps["text"]):
                if int(caption_id) in self.caption_text:
                    raise ValueError(f"{d / 'captions.parquet'}: caption id {caption_id} is already defined elsewhere")
                self.caption_text[int(caption_id)] = text

    def image_batch(self, ids: np.ndarray) -> np.ndarray:
        """uint8 [N,H,W,3] for these image ids (error names the first unknown id)."""
        try:
            where = [self.image_row[int(i)] for i in ids]
        except KeyError as err:
            raise KeyError(f"{self.path}: no image with id {err.args[0]} (nor in the extra item folders)") from err
        return (
            np.stack([np.asarray(self.arrays[s][r]) for s, r in where]) if where else np.zeros((0, 1, 1, 3), np.uint8)
        )

    def texts(self, ids: np.ndarray) -> list[str]:
        """Caption texts for these caption ids."""
        try:
            return [self.caption_text[int(i)] for i in ids]
        except KeyError as err:
            raise KeyError(f"{self.path}: no caption with id {err.args[0]} (nor in the extra item folders)") from err


class FileImages:
    """Images stored as files (or zip members), read on demand and resized to one square size."""

    def __init__(self, table_path: Path, paths: list[str], image_size: int | None) -> None:
        self.table_path, self.paths, self.image_size = table_path, paths, image_size
        self._zips: dict[str, zipfile.ZipFile] = {}

    def _open(self, row: int) -> Image.Image:
        where = self.paths[row]
        try:
            if "::" in where:
                archive, member = where.split("::", 1)
                if archive not in self._zips:
                    self._zips[archive] = zipfile.ZipFile(archive)
                with self._zips[archive].open(member) as f:
                    return Image.open(io.BytesIO(f.read())).convert("RGB")
            with Image.open(where) as im:
                return im.convert("RGB")
        except (OSError, KeyError, zipfile.BadZipFile) as err:
            raise ValueError(f"{self.table_path}: row {row}: cannot read image {where!r} ({err})") from err

    def __getitem__(self, row: int) -> np.ndarray:
        """uint8 [S,S,3]: shorter side resized to S (bicubic), then the centre crop."""
        if self.image_size is None:
            raise ValueError(f"{self.table_path}: images are files; the store needs an image_size to resize them")
        return resize_center_crop(self._open(row), self.image_size)


def resize_center_crop(image: Image.Image, size: int) -> np.ndarray:
    """open_clip's eval transform on uint8: resize the shorter side to `size` (bicubic), centre crop."""
    w, h = image.size
    nw, nh = (size, int(size * h / w)) if w <= h else (int(size * w / h), size)  # torchvision's Resize(size)
    image = image.resize((nw, nh), Image.BICUBIC)
    left, top = int(round((nw - size) / 2.0)), int(round((nh - size) / 2.0))  # torchvision's CenterCrop
    return np.asarray(image.crop((left, top, left + size, top + size)), dtype=np.uint8)


def folder_items(items_dir: str | Path, splits: Sequence[str] | None = None) -> pd.DataFrame:
    """Every image and caption of an items folder (of these splits only, when given), sorted by id."""
    d = Path(items_dir)
    frames = []
    for kind, name, col in (("image", "images.parquet", "image_id"), ("caption", "captions.parquet", "caption_id")):
        table = read_parquet_file(d / name)
        if splits is not None:
            table = table[table["split"].isin(list(splits))]
        frames.append(pd.DataFrame({"kind": kind, "item_id": np.sort(table[col].to_numpy(dtype=np.int64))}))
    return pd.concat(frames, ignore_index=True)


def embed_items(
    encoder: DualEncoder, store: ItemStore, items: pd.DataFrame, batch_size: int = 256
) -> dict[str, np.ndarray]:
    """One forward pass per item: image and caption embeddings with their ids."""
    import torch

    out: dict[str, np.ndarray] = {}
    kinds = getattr(encoder, "item_kinds", ("image", "caption"))  # a unimodal model embeds one kind only
    for kind, encode, fetch in (
        ("image", getattr(encoder, "encode_images", None), store.image_batch),
        ("caption", getattr(encoder, "encode_texts", None), store.texts),
    ):
        ids = items.loc[items["kind"] == kind, "item_id"].to_numpy(dtype=np.int64)
        if kind not in kinds:
            out[f"{kind}_ids"], out[f"{kind}_emb"] = ids[:0], np.zeros((0, 0), np.float32)
            continue
        chunks = [encode(fetch(ids[s : s + batch_size])).cpu() for s in range(0, len(ids), batch_size)]
        emb = torch.cat(chunks).numpy().astype(np.float32) if chunks else np.zeros((0, 0), np.float32)
        out[f"{kind}_ids"], out[f"{kind}_emb"] = ids, emb
    return out


def write_embeddings(path: str | Path, emb: dict[str, np.ndarray]) -> None:
    """Write the cache file atomically (.npz)."""
    with atomic_path(path, suffix=".npz") as tmp:
        np.savez(tmp, **emb)


class EmbeddingCache:
    """Read side of the cache: embeddings by item id, from one or more cache files of one model
    (the source's items, plus the new items a benchmark added), never overlapping."""

    def __init__(self, paths: str | Path | Sequence[str | Path]) -> None:
        paths = [paths] if isinstance(paths, (str, Path)) else list(paths)
        if not paths:
            raise ValueError("EmbeddingCache needs at least one cache file")
        self.path = Path(paths[0]) if len(paths) == 1 else Path(", ".join(map(str, paths)))
        parts: dict[str, list[np.ndarray]] = {"image": [], "caption": []}
        ids: dict[str, list[np.ndarray]] = {"image": [], "caption": []}
        for p in paths:
            with reading(p):
                data = np.load(p)
                for k in ("image", "caption"):
                    if len(data[f"{k}_ids"]):
                        parts[k].append(data[f"{k}_emb"])
                        ids[k].append(data[f"{k}_ids"])
        self.emb, self.row = {}, {}
        for k in ("image", "caption"):
            all_ids = np.concatenate(ids[k]) if ids[k] else np.zeros(0, np.int64)
            self.emb[k] = np.concatenate(parts[k]) if parts[k] else np.zeros((0, 0), np.float32)
            self.row[k] = {int(i): r for r, i in enumerate(all_ids)}
            if len(self.row[k]) != len(all_ids):
                raise ValueError(f"{self.path}: {k} ids occur in more than one cache file")

    def modalities(self) -> frozenset[str]:
        """What these embeddings can score: text-text with captions, image-image with images, image-text with both."""
        has = {k for k in ("image", "caption") if len(self.row[k])}
        out = {"text-text"} if "caption" in has else set()
        out |= {"image-image"} if "image" in has else set()
        out |= {"image-text"} if has == {"image", "caption"} else set()
        return frozenset(out)

    def get(self, kind: str, ids: np.ndarray) -> np.ndarray:
        """Embeddings [N, D] of these ids as a numpy array (a copy; float32 as the cache stores them), naming the
        first id the cache lacks. Scoring with numpy needs no torch."""
        rows = self.row[kind]
        missing = [int(i) for i in ids if int(i) not in rows]
        if missing:
            raise KeyError(f"{self.path}: no {kind} embedding for ids {missing[:5]} (is the cache stale?)")
        return self.emb[kind][np.fromiter((rows[int(i)] for i in ids), dtype=np.int64, count=len(ids))]


# --- several devices -------------------------------------------------------------------------------


class OneHot:
    """Rows of an identity matrix, `rows` naming each row's 1: the embeddings of a pair-score grid's
    images (`scoring.pairs.GridCache`), where a caption's embedding is its row of pair scores. A dot
    product with one-hot rows is a lookup, so `dots` and `gathered_dots` read the other matrix's
    entries where a matrix product would multiply by zeros (5k x 5k x 25k of them on a gallery):
    exactly the product's values for finite scores."""

    def __init__(self, rows: np.ndarray, n: int, dtype: Any = np.float64) -> None:
        self.rows = np.asarray(rows, dtype=np.int64)
        self.n = int(n)
        self.dtype = np.dtype(dtype)

    @classmethod
    def identity(cls, n: int, dtype: Any = np.float64) -> OneHot:
        return cls(np.arange(n, dtype=np.int64), n, dtype)

    @property
    def shape(self) -> tuple[int, int]:
        return (len(self.rows), self.n)

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, key: Any) -> OneHot:
        """Rows, as a numpy array's rows: a slice, an index array or a boolean mask."""
        rows = self.rows[key]
        if rows.ndim != 1:
            raise TypeError(f"one-hot rows take a slice, an index array or a mask over rows, not {key!r}")
        return OneHot(rows, self.n, self.dtype)

    def astype(self, dtype: Any, copy: bool = True) -> OneHot:
        """The same rows in another float type (0 and 1 are exact in every one)."""
        return OneHot(self.rows, self.n, dtype)

    def dense(self) -> np.ndarray:
        out = np.zeros(self.shape, dtype=self.dtype)
        out[np.arange(len(self.rows)), self.rows] = 1
        return out


def row_dots(a: Any, b: Any) -> np.ndarray:
    """Row-wise <a[r], b[r]> in float64; a lookup where either side is `OneHot`."""
    if isinstance(a, OneHot) and isinstance(b, OneHot):
        return (a.rows == b.rows).astype(np.float64)
    if isinstance(b, OneHot):
        a, b = b, a
    if isinstance(a, OneHot):
        return np.asarray(b[np.arange(len(b)), a.rows], dtype=np.float64)
    return (np.asarray(a, dtype=np.float64) * np.asarray(b, dtype=np.float64)).sum(axis=1)


def pair_dots(cache: EmbeddingCache, captions: np.ndarray, images: np.ndarray) -> np.ndarray:
    """Row-wise s(caption, image) = <caption embedding, image embedding> from the cache, in float64."""
    if len(captions) == 0:
        return np.zeros(0, dtype=np.float64)
    return row_dots(cache.get("caption", captions), cache.get("image", images))


def visible_devices(n: int | str) -> list[str]:
    """The devices `--devices` asks for: N (or 'all') visible CUDA devices, else N CPU shards (simulated devices)."""
    import torch

    n_cuda = torch.cuda.device_count()
    if n == "all":
        n = max(1, n_cuda)
    n = int(n)
    if n < 1:
        raise ValueError(f"--devices {n}: expected a positive number of devices or 'all'")
    if n_cuda >= n:
        return [f"cuda:{k}" for k in range(n)]
    return ["cpu"] * n


def shard_ranges(n_items: int, batch_size: int, n_shards: int) -> list[tuple[int, int]]:
    """Contiguous item ranges, one per shard, cut at batch boundaries: every item stays in the batch it has on one
    device, so a sharded run does the same forward passes as a single one."""
    n_batches = -(-n_items // batch_size) if n_items else 0
    cuts = [min(n_items, batch_size * (n_batches * k // n_shards)) for k in range(n_shards + 1)]
    return list(zip(cuts[:-1], cuts[1:]))


def _embed_shard(
    spec: dict,
    name: str,
    checkpoint: str | None,
    items_dir: str,
    extra_dirs: Sequence[str],
    kind: str,
    ids: np.ndarray,
    batch_size: int,
    device: str,
    threads: int,
) -> np.ndarray:
    """One worker's part: build the model on its device, embed its items (a picklable top-level function)."""
    import torch

    from itmbench.models.registry import build_encoder
    from itmbench.models.spec import model_spec

    torch.set_num_threads(threads)
    encoder = build_encoder(model_spec(name, spec), torch.device(device), checkpoint)
    store = ItemStore(items_dir, extra_dirs, image_size=getattr(encoder, "image_size", 224))
    encode, fetch = (
        (encoder.encode_images, store.image_batch) if kind == "image" else (encoder.encode_texts, store.texts)
    )
    chunks = [encode(fetch(ids[s : s + batch_size])).cpu() for s in range(0, len(ids), batch_size)]
    return torch.cat(chunks).numpy().astype(np.float32) if chunks else np.zeros((0, 0), np.float32)


def embed_items_on_devices(
    spec: dict,
    name: str,
    checkpoint: str | Path | None,
    items_dir: str | Path,
    extra_dirs: Sequence[str | Path],
    items: pd.DataFrame,
    devices: Sequence[str],
    batch_size: int = 256,
    threads: int = 1,
) -> dict[str, np.ndarray]:
    """`embed_items` with the item batches split across devices: one worker process per device (a CUDA device, or a
    CPU shard), each with its own replica of the model; the shards' embeddings are concatenated in item order."""
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    per_worker = max(1, threads // len(devices)) if all(d == "cpu" for d in devices) else threads
    common = (spec, name, None if checkpoint is None else str(checkpoint), str(items_dir), [str(d) for d in extra_dirs])
    out: dict[str, np.ndarray] = {}
    with ProcessPoolExecutor(max_workers=len(devices), mp_context=get_context("spawn")) as pool:
        for kind in ("image", "caption"):
            ids = items.loc[items["kind"] == kind, "item_id"].to_numpy(dtype=np.int64)
            ranges = [(a, b) for a, b in shard_ranges(len(ids), batch_size, len(devices))]
            futures = [
                pool.submit(_embed_shard, *common, kind, ids[a:b], batch_size, device, per_worker)
                for (a, b), device in zip(ranges, devices)
                if b > a
            ]
            parts = [f.result() for f in futures]
            out[f"{kind}_ids"] = ids
            out[f"{kind}_emb"] = np.concatenate(parts) if parts else np.zeros((0, 0), np.float32)
    return out
