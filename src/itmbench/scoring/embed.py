"""The embedding cache: one embedding per unique item per model, shared by every benchmark."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import torch

from itmbench.io import atomic_path
from itmbench.models.registry import DualEncoder


class ItemStore:
    """Images and caption texts by id, read from a world items folder."""

    def __init__(self, items_dir: str | Path) -> None:
        d = Path(items_dir)
        self.images = np.load(d / "images.npy", mmap_mode="r")
        table = pd.read_parquet(d / "images.parquet")
        self.image_row = dict(zip(table["image_id"].to_numpy(), range(len(table))))
        caps = pd.read_parquet(d / "captions.parquet")
        self.caption_text = dict(zip(caps["caption_id"].to_numpy(), caps["text"]))
        self.path = d

    def image_batch(self, ids: np.ndarray) -> np.ndarray:
        """uint8 [N,H,W,3] for these image ids (error names the first unknown id)."""
        try:
            rows = [self.image_row[int(i)] for i in ids]
        except KeyError as err:
            raise KeyError(f"{self.path}: no image with id {err.args[0]}") from err
        return np.asarray(self.images[rows])

    def texts(self, ids: np.ndarray) -> list[str]:
        """Caption texts for these caption ids."""
        try:
            return [self.caption_text[int(i)] for i in ids]
        except KeyError as err:
            raise KeyError(f"{self.path}: no caption with id {err.args[0]}") from err


def needed_items(item_tables: list[pd.DataFrame]) -> pd.DataFrame:
    """Union of the items every benchmark needs, sorted, each once."""
    if not item_tables:
        return pd.DataFrame({"kind": pd.Series(dtype=str), "item_id": pd.Series(dtype="int64")})
    df = pd.concat(item_tables, ignore_index=True)[["kind", "item_id"]].drop_duplicates()
    return df.sort_values(["kind", "item_id"], kind="stable", ignore_index=True)


def embed_items(
    encoder: DualEncoder, store: ItemStore, items: pd.DataFrame, batch_size: int = 256
) -> dict[str, np.ndarray]:
    """One forward pass per item: image and caption embeddings with their ids."""
    out: dict[str, np.ndarray] = {}
    for kind, encode, fetch in (
        ("image", encoder.encode_images, store.image_batch),
        ("caption", encoder.encode_texts, store.texts),
    ):
        ids = items.loc[items["kind"] == kind, "item_id"].to_numpy(dtype=np.int64)
        chunks = [encode(fetch(ids[s : s + batch_size])).cpu() for s in range(0, len(ids), batch_size)]
        emb = torch.cat(chunks).numpy().astype(np.float32) if chunks else np.zeros((0, 0), np.float32)
        out[f"{kind}_ids"], out[f"{kind}_emb"] = ids, emb
    return out


def write_embeddings(path: str | Path, emb: dict[str, np.ndarray]) -> None:
    """Write the cache file atomically (.npz)."""
    with atomic_path(path, suffix=".npz") as tmp:
        np.savez(tmp, **emb)


class EmbeddingCache:
    """Read side of the cache: embeddings by item id."""

    def __init__(self, path: str | Path) -> None:
        data = np.load(path)
        self.path = Path(path)
        self.emb = {k: data[f"{k}_emb"] for k in ("image", "caption")}
        self.row = {k: {int(i): r for r, i in enumerate(data[f"{k}_ids"])} for k in ("image", "caption")}

    def get(self, kind: str, ids: np.ndarray) -> torch.Tensor:
        """Embeddings [N, D] of these ids, naming the first id the cache lacks."""
        rows = self.row[kind]
        missing = [int(i) for i in ids if int(i) not in rows]
        if missing:
            raise KeyError(f"{self.path}: no {kind} embedding for ids {missing[:5]} (is the cache stale?)")
        return torch.from_numpy(self.emb[kind][[rows[int(i)] for i in ids]])
