"""COCO items from the released zips: Karpathy splits, COCO caption ids with sentids, images read from the zips."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from coco_fixtures import IMAGES, make_tiny_coco
from PIL import Image

from itmbench.cli import main
from itmbench.scoring.embed import ItemStore, resize_center_crop
from itmbench.sources.coco import needed_items, write_coco_items


@pytest.fixture()
def tiny(tmp_path: Path) -> dict[str, Path]:
    return make_tiny_coco(tmp_path / "raw")


def test_items_tables_splits_and_sentids(tiny, tmp_path) -> None:
    out = tmp_path / "items"
    rc = main(
        [
            "coco-items",
            "--karpathy",
            str(tiny["karpathy"]),
            "--captions",
            str(tiny["captions"]),
            "--images",
            f"train2014={tiny['train2014']}",
            f"val2014={tiny['val2014']}",
            "--out",
            str(out),
        ]
    )
    assert rc == 0
    images = pd.read_parquet(out / "images.parquet")
    captions = pd.read_parquet(out / "captions.parquet")
    assert images["image_id"].tolist() == sorted(i for i, *_ in IMAGES)
    assert dict(zip(images["image_id"], images["split"]))[30] == "restval"
    assert (
        images.loc[images["image_id"] == 42, "path"].item()
        == f"{tiny['val2014']}::val2014/COCO_val2014_000000000042.jpg"
    )
    assert len(captions) == 5 * len(IMAGES)
    # caption ids are COCO's annotation ids; each carries its Karpathy sentid (matched despite the padding spaces)
    assert captions["caption_id"].min() == 1000 and (captions["sentid"] >= 0).all()
    assert captions["sentid"].is_unique
    first = captions[captions["image_id"] == 9].sort_values("sentid")
    assert first["sentid"].tolist() == [0, 1, 2, 3, 4] and first["caption_id"].tolist() == [
        1000,
        1007,
        1014,
        1021,
        1028,
    ]
    assert set(captions.loc[captions["image_id"] == 74, "split"]) == {"test"}


def test_a_karpathy_sentence_without_annotation_is_named(tmp_path) -> None:
    raw = make_tiny_coco(tmp_path / "raw", drop_annotation=49)
    with pytest.raises(ValueError, match=r"sentid \d+ of image 49"):
        write_coco_items(
            raw["karpathy"],
            raw["captions"],
            {"train2014": raw["train2014"], "val2014": raw["val2014"]},
            tmp_path / "items",
        )
    assert not (tmp_path / "items" / "images.parquet").exists()


def test_a_missing_image_zip_member_is_named(tiny, tmp_path) -> None:
    with zipfile.ZipFile(tiny["val2014"], "w") as zf:  # an empty val2014 zip
        zf.writestr("val2014/other.jpg", b"")
    with pytest.raises(ValueError, match="no member 'val2014/COCO_val2014_000000000042.jpg' for image 42"):
        write_coco_items(
            tiny["karpathy"],
            tiny["captions"],
            {"train2014": tiny["train2014"], "val2014": tiny["val2014"]},
            tmp_path / "items",
        )


def test_store_reads_zip_images_as_open_clip_preprocesses_them(tiny, tmp_path) -> None:
    import open_clip
    import torch

    write_coco_items(
        tiny["karpathy"],
        tiny["captions"],
        {"train2014": tiny["train2014"], "val2014": tiny["val2014"]},
        tmp_path / "items",
    )
    store = ItemStore(tmp_path / "items", image_size=48)
    batch = store.image_batch(np.array([77, 9, 25]))
    assert batch.shape == (3, 48, 48, 3) and batch.dtype == np.uint8
    # the same pixels as open_clip's eval transform (before ToTensor's /255 and the normalisation)
    transform = open_clip.image_transform(48, is_train=False, mean=(0, 0, 0), std=(1, 1, 1))
    with zipfile.ZipFile(tiny["val2014"]) as zf:
        image = Image.open(io.BytesIO(zf.read("val2014/COCO_val2014_000000000077.jpg"))).convert("RGB")
    reference = (transform(image) * 255).round().to(torch.uint8).permute(1, 2, 0).numpy()
    assert np.abs(reference.astype(int) - batch[0].astype(int)).max() <= 1
    assert np.array_equal(resize_center_crop(image, 48), batch[0])
    with pytest.raises(ValueError, match="needs an image_size"):
        ItemStore(tmp_path / "items").image_batch(np.array([9]))


def test_needed_items_keep_only_coco_items(tiny, tmp_path) -> None:
    write_coco_items(
        tiny["karpathy"],
        tiny["captions"],
        {"train2014": tiny["train2014"], "val2014": tiny["val2014"]},
        tmp_path / "items",
    )
    a = pd.DataFrame({"kind": ["image", "caption", "caption"], "item_id": [74, 1000, 10**9]})  # 10**9: an added caption
    b = pd.DataFrame({"kind": ["image", "image"], "item_id": [74, 77]})
    out = needed_items([a, b], tmp_path / "items")
    assert out.to_dict("list") == {"kind": ["caption", "image", "image"], "item_id": [1000, 74, 77]}
