"""ARO on the coco source: the authors' VG files read as their `dataset_zoo` reads them, and refused when wrong.

A worked example in the authors' format (two VG-Relation cases, one VG-Attribution case, a zip of two images)
checks the crop against PIL's `crop((x, y, x + w, y + h))` of the image, the options' order and labels, and the
added items; then each kind of bad file is refused with a message naming the file, the record and what was
expected, and nothing is written. The round trip through the world's export is in
tests/sources/test_export_release.py.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from itmbench.papers.aro.coco import AroCocoConfig, crop, from_released
from itmbench.papers.aro.released import read_aro_vg_json
from itmbench.papers.registry import ARO_IMAGES_KEY, ARO_VG_KEYS
from itmbench.sources._common import SourceFormatError
from itmbench.sources.fetch import raw_path


def _png(pixels: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(pixels, mode="RGB").save(buf, format="PNG")
    return buf.getvalue()


RNG = np.random.default_rng(0)
IMAGES = {
    "1.jpg": RNG.integers(0, 256, (20, 30, 3), dtype=np.uint8),
    "2.jpg": RNG.integers(0, 256, (16, 16, 3), dtype=np.uint8),
}
RELATION = [
    {"image_path": "1.jpg", "bbox_x": 2, "bbox_y": 3, "bbox_w": 10, "bbox_h": 5, "relation_name": "on",
     "true_caption": "the cup is on the table", "false_caption": "the table is on the cup", "image_id": 7},
    {"image_path": "2.jpg", "bbox_x": 0, "bbox_y": 0, "bbox_w": 16, "bbox_h": 16, "relation_name": "above",
     "true_caption": "the sky is above the sea", "false_caption": "the sea is above the sky"},
]  # fmt: skip
ATTRIBUTION = [
    {"image_path": "1.jpg", "bbox_x": 2, "bbox_y": 3, "bbox_w": 10, "bbox_h": 5, "attributes": ["red", "wooden"],
     "true_caption": "the red cup and the wooden table", "false_caption": "the wooden cup and the red table"},
]  # fmt: skip


def _release(root: Path, relation=RELATION, attribution=ATTRIBUTION, images=None) -> Path:
    for key, doc in ((ARO_VG_KEYS["vg_relation"], relation), (ARO_VG_KEYS["vg_attribution"], attribution)):
        path = raw_path(key, root)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in (
            images if images is not None else {f"images/{k}": _png(v) for k, v in IMAGES.items()}
        ).items():
            zf.writestr(name, data)
    raw_path(ARO_IMAGES_KEY, root).write_bytes(buf.getvalue())
    return root


def test_the_worked_example_is_read_cropped_and_added_as_the_authors_code_reads_it(tmp_path):
    released = from_released(_release(tmp_path), None, AroCocoConfig(id_offset=100))
    inst, opts = released.tables["instances"], released.tables["options"]
    assert list(inst["dataset"]) == ["vg_relation", "vg_relation", "vg_attribution"]
    assert list(inst["label"]) == ["on", "above", "red_wooden"]  # evaluate_scores' f"{a[0]}_{a[1]}"
    assert list(inst["caption"]) == [r["true_caption"] for r in RELATION + ATTRIBUTION]
    assert list(opts["kind"]) == ["true", "false"] * 3 and list(opts["option"]) == [0, 1] * 3
    assert list(opts["text"][1::2]) == [r["false_caption"] for r in RELATION + ATTRIBUTION]
    assert (opts["caption_id"].to_numpy()[::2] == inst["caption_id"].to_numpy()).all()
    # the crop: rows y..y+h, columns x..x+w of the image (PIL's crop box), each distinct crop added once
    images = {image_id: data for image_id, _, data, _ in released.added.image_records()}
    assert len(images) == 2 and inst["image_id"].iloc[0] == inst["image_id"].iloc[2] >= 100
    got = np.asarray(Image.open(io.BytesIO(images[int(inst["image_id"].iloc[0])])).convert("RGB"))
    np.testing.assert_array_equal(got, IMAGES["1.jpg"][3:8, 2:12])
    whole = np.asarray(Image.open(io.BytesIO(images[int(inst["image_id"].iloc[1])])).convert("RGB"))
    np.testing.assert_array_equal(whole, IMAGES["2.jpg"])
    assert released.log == {"vg_relation": 2, "vg_attribution": 1, "added_images": 2, "added_captions": 6}
    items = released.tables["items"]
    assert sorted(items.loc[items["kind"] == "image", "item_id"]) == sorted(images)


def test_crop_is_pils_crop_box():
    pixels = RNG.integers(0, 256, (9, 7, 3), dtype=np.uint8)
    np.testing.assert_array_equal(crop(_png(pixels), (1, 2, 4, 3)), pixels[2:5, 1:5])


@pytest.mark.parametrize(
    ("change", "where", "expected"),
    [
        (lambda r: r[1].pop("true_caption"), "item 1.true_caption", "key 'true_caption'"),
        (lambda r: r[0].update(bbox_w=0), "item 0.bbox_w", "a positive box size"),
        (lambda r: r[0].update(bbox_x="left"), "item 0.bbox_x", "a number"),
        (lambda r: r[1].update(relation_name=""), "item 1.relation_name", "a relation name"),
        (lambda r: r[0].update(image_path="9.jpg"), "item 0.image_path", "images/9.jpg"),
    ],
)
def test_a_bad_relation_record_is_refused_naming_file_record_and_expectation(tmp_path, change, where, expected):
    relation = json.loads(json.dumps(RELATION))
    change(relation)
    root = _release(tmp_path, relation=relation)
    with pytest.raises(SourceFormatError) as err:
        from_released(root, None, AroCocoConfig(id_offset=100))
    message = str(err.value)
    assert "visual_genome_relation.json" in message and where in message and expected in message


def test_attributes_must_be_two(tmp_path):
    bad = [dict(ATTRIBUTION[0], attributes=["red"])]
    path = raw_path(ARO_VG_KEYS["vg_attribution"], _release(tmp_path, attribution=bad))
    with pytest.raises(SourceFormatError, match=r"item 0\.attributes: expected a list of the two swapped attributes"):
        read_aro_vg_json(path, "vg_attribution")


def test_an_empty_set_or_an_object_instead_of_a_list_is_refused(tmp_path):
    path = raw_path(ARO_VG_KEYS["vg_relation"], _release(tmp_path, relation=[]))
    with pytest.raises(ValueError, match="no items"):
        read_aro_vg_json(path, "vg_relation")
    path.write_text(json.dumps({"0": RELATION[0]}))
    with pytest.raises(SourceFormatError, match="top level: expected a list of test cases"):
        read_aro_vg_json(path, "vg_relation")


def test_a_confirmation_page_instead_of_the_zip_is_named(tmp_path):
    root = _release(tmp_path)
    raw_path(ARO_IMAGES_KEY, root).write_bytes(b"<!DOCTYPE html><html>Google Drive can't scan this file</html>")
    with pytest.raises(SourceFormatError, match="expected a zip archive of the VG images.*gdown"):
        from_released(root, None, AroCocoConfig(id_offset=100))
