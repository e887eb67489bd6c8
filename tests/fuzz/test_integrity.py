"""Files damaged in place (issue 34): 64 bytes zeroed in the middle, the size unchanged. A parquet file the
project writes carries page checksums and is refused on read; an .npz (a zip) and a torch checkpoint (a zip)
are refused by their members' CRC-32. Each refusal is one line naming the file; the undamaged file reads."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from itmbench.errors import input_error_message
from itmbench.io import write_parquet
from itmbench.reading import load_torch, read_parquet_checked, read_parquet_file

ROWS = 5000


def _zero_middle(path: Path, n: int = 64) -> None:
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle : middle + n] = bytes(n)
    path.write_bytes(bytes(data))


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({"id": np.arange(ROWS), "score": rng.random(ROWS), "text": [f"c{i}" for i in range(ROWS)]})


def test_written_parquet_reads_back_and_a_zeroed_middle_is_refused(tmp_path):
    path = tmp_path / "scores.parquet"
    write_parquet(path, _frame())
    pd.testing.assert_frame_equal(read_parquet_file(path), _frame())
    size = path.stat().st_size
    _zero_middle(path)
    assert path.stat().st_size == size
    for read in (lambda: read_parquet_file(path), lambda: read_parquet_checked(path, ("id",), "scores")):
        with pytest.raises(ValueError, match="CRC") as exc:
            read()
        message = input_error_message(exc.value)
        assert message is not None and str(path) in message and "\n" not in message


def test_a_parquet_without_page_checksums_is_read_unverified(tmp_path):
    """Another tool's file (a released table, a predictions file) has no page checksums: read as it is."""
    path = tmp_path / "other.parquet"
    _frame().to_parquet(path, index=False)
    pd.testing.assert_frame_equal(read_parquet_file(path), _frame())


def test_a_zeroed_embedding_cache_is_refused_naming_the_file(tmp_path):
    from itmbench.errors import InputError
    from itmbench.scoring.embed import EmbeddingCache, write_embeddings

    path = tmp_path / "items.npz"
    rng = np.random.default_rng(0)
    emb = {"image_ids": np.arange(300), "image_emb": rng.random((300, 64), dtype=np.float32)}
    emb |= {"caption_ids": np.arange(300), "caption_emb": rng.random((300, 64), dtype=np.float32)}
    write_embeddings(path, emb)
    assert len(EmbeddingCache(path).row["image"]) == 300
    _zero_middle(path)
    with pytest.raises(InputError, match="Bad CRC-32") as exc:  # the .npz's zip members carry their CRC
        EmbeddingCache(path)
    assert str(path) in str(exc.value)


def test_a_zeroed_torch_checkpoint_is_refused_naming_the_file(tmp_path):
    torch = pytest.importorskip("torch")
    path = tmp_path / "model.pt"
    weights = {"w": torch.arange(6400, dtype=torch.float32).reshape(100, 64)}
    torch.save(weights, path)
    assert torch.equal(load_torch(path)["w"], weights["w"])
    _zero_middle(path)
    assert not torch.equal(torch.load(path, weights_only=True)["w"], weights["w"])  # torch alone reads other weights
    with pytest.raises(ValueError, match=r"fails its CRC-32 check") as exc:
        load_torch(path)
    assert str(path) in str(exc.value)


def test_an_embedding_cache_holding_a_pickle_is_refused_not_run(tmp_path):
    """A hostile .npz: an object array would unpickle (and run code) if allowed; it is refused by name."""
    from itmbench.errors import InputError
    from itmbench.scoring.embed import EmbeddingCache

    path = tmp_path / "items.npz"
    np.savez(path, image_ids=np.array([object()], dtype=object), image_emb=np.zeros((1, 4), np.float32))
    with pytest.raises(InputError, match="allow_pickle") as exc:
        EmbeddingCache(path)
    assert str(path) in str(exc.value)
