"""The embedding cache: one embedding per unique item per model, shared by every benchmark."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from itmbench.io import atomic_path
from itmbench.models.registry import DualEncoder


class ItemStore:
    """Images and caption texts by id: the source's items folder plus the folders of new items
    that benchmarks add (BiVLC's generated images and edited captions), all in one layout."""

    def __init__(self, items_dir: str | Path, extra_dirs: Sequence[str | Path] = ()) -> None:
        self.path = Path(items_dir)
        self.arrays: list[np.ndarray] = []
        self.image_row: dict[int, tuple[int, int]] = {}
        self.caption_text: dict[int, str] = {}
        for d in (self.path, *map(Path, extra_dirs)):
            store = len(self.arrays)
            self.arrays.append(np.load(d / "images.npy", mmap_mode="r"))
            table = pd.read_parquet(d / "images.parquet")
            for row, image_id in enumerate(table["image_id"].to_numpy()):
                if int(image_id) in self.image_row:
                    raise ValueError(f"{d / 'images.parquet'}: image id {image_id} is already defined elsewhere")
                self.image_row[int(image_id)] = (store, row)
            caps = pd.read_parquet(d / "captions.parquet")
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


def folder_items(items_dir: str | Path, splits: Sequence[str] | None = None) -> pd.DataFrame:
    """Every image and caption of an items folder (of these splits only, when given), sorted by id."""
    d = Path(items_dir)
    frames = []
    for kind, name, col in (("image", "images.parquet", "image_id"), ("caption", "captions.parquet", "caption_id")):
        table = pd.read_parquet(d / name)
        if splits is not None:
            table = table[table["split"].isin(list(splits))]
        frames.append(pd.DataFrame({"kind": kind, "item_id": np.sort(table[col].to_numpy(dtype=np.int64))}))
    return pd.concat(frames, ignore_index=True)


def embed_items(
    encoder: DualEncoder, store: ItemStore, items: pd.DataFrame, batch_size: int = 256
) -> dict[str, np.ndarray]:
    """One forward pass per item: image and caption embeddings with their ids."""
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

    def get(self, kind: str, ids: np.ndarray) -> torch.Tensor:
        """Embeddings [N, D] of these ids, naming the first id the cache lacks."""
        rows = self.row[kind]
        missing = [int(i) for i in ids if int(i) not in rows]
        if missing:
            raise KeyError(f"{self.path}: no {kind} embedding for ids {missing[:5]} (is the cache stale?)")
        return torch.from_numpy(self.emb[kind][[rows[int(i)] for i in ids]])
