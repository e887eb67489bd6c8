"""The world as a COCO-format release (`itmbench export-release`) and back through the coco source: nothing lost.

A small world's benchmarks (built as tests/test_score_without_torch.py builds them, with SugarCrepe, and ECCV
with its CxC positives as the workflow builds it) are exported as the released files; `coco-items` and
`build-coco-benchmark` read them back under the release's registry overlay, and every canonical table is
compared with the world's, ids mapped (COCO image id = world image id + IMAGE_ID_OFFSET, caption annotation id
= world caption id + CAPTION_ID_OFFSET, Karpathy sentid = world caption id; a text or image the coco source adds
is found by its content). The maps are not taken on trust: they are read back from the release's items (texts
by sentid, pixels by image).

Cross-source identity: both sources are scored by `score-benchmark` with one model that is a function of
content (a caption's vector from its text, an image's from its pixels), each reading its items through its own
item store (the coco one decodes the release's PNGs from the zips and the parquet); per-instance scores and
metrics must be equal number for number. What the release format cannot carry is named in NOT_CARRIED and
left out of the comparison there, and only there.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from unit_world import unit_world

from itmbench.cli import main
from itmbench.errors import InputError
from itmbench.papers.registry import BENCHMARKS
from itmbench.reading import read_json
from itmbench.scoring.embed import ItemStore, write_embeddings
from itmbench.sources import export, release_format
from itmbench.sources.coco_registry import COCO_BENCHMARKS
from itmbench.sources.fetch import raw_path
from itmbench.sources.loading import loader_of
from itmbench.sources.released import (
    ChecksumMismatchError,
    count_records,
    file_md5,
    load_registry,
    overlay_registry,
    registry_overlay,
    released_file,
)
from itmbench.world.generate import generate_world, write_world

REPO = Path(__file__).resolve().parents[2]
WORLD = {"n_train": 60, "n_val": 10, "n_test": 40}
SECTIONS = {  # small configs, as tests/test_score_without_torch.py builds the benchmarks
    "bison": {"vector_size": 16, "epochs": 3},
    "mcic": {"pv_grid": {"vector_size": [64], "epochs": [10]}, "neighbourhood": 30},
    "bivlc": {},
    "cxc": {},
    "eccv": {"annotator_source": "world"},  # the simulated oracles: no trained model here
    "retrieval": {},
    "sugarcrepe": {},
    "aro": {},
}
ORDER = ("cxc", "bison", "mcic", "eccv", "retrieval", "bivlc", "sugarcrepe", "aro")  # ECCV after its CxC
SCORE = {"ks": [1, 5, 10], "n_boot": 50, "seed": 0, "confidence": 0.95}
DIM = 16
# What each benchmark's release format cannot carry: left out of the comparisons below by name.
NOT_CARRIED = {
    "bison": "construction tables pairs, stages; the world-only column caption_fits_false",
    "mcic": "world_split; construction tables decoys, construction (the coco source counts its own)",
    "eccv": "machine annotations, stages and the plausible-match tables: PMRP (and the ranking depth it needs)",
    "cxc": "similarity, truth, the per-rater ratings (the files hold the mean); stages; the build settings",
    "bivlc": "edits, candidates, stages, world-only columns; the BiVLC-to-SugarCrepe link (matched by text)",
    "sugarcrepe": "edits, stages, negative_structure, edit (the instance order: the files are per subset)",
    "retrieval": "the 'truth' positives (every caption that fits an image: only the world knows them)",
    "aro": "the Order sets (no released file holds them: the authors perturb at load time); candidates",
}


@dataclass
class Sources:
    """Both sides: the world's folders and tables, the release, the coco source's folders and tables."""

    root: Path
    world: object
    world_tables: dict[str, dict[str, pd.DataFrame]]
    coco_tables: dict[str, dict[str, pd.DataFrame]]
    release: Path
    items: Path


def _file(key: str, root: Path) -> Path:
    return raw_path(key, root)


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> Sources:
    """The world written as the workflow writes it, exported by the CLI, read back by the coco source's CLI."""
    root = tmp_path_factory.mktemp("export_release")
    world_cfg = unit_world(WORLD)
    world = generate_world(world_cfg)
    write_world(world, root / "world" / "items")
    built: dict[str, dict[str, pd.DataFrame]] = {}
    for name in ORDER:
        entry = BENCHMARKS[name]
        built[name] = entry.build(world, SECTIONS[name], world_cfg, {d: built[d] for d in entry.depends_on})
        entry.part("canonical").write(built[name], root / "world" / name)
    release = root / "release"
    assert main(["export-release", "--world", str(root / "world"), "--out", str(release)]) == 0
    overlay = str(release / export.OVERLAY)
    items = root / "coco" / "items"
    zips = [f"{s}={_file(f'coco_{s}_images', release)}" for s in ("train2014", "val2014")]
    argv = ["coco-items", "--karpathy", str(_file("karpathy_splits", release))]
    argv += ["--captions", str(_file("coco_captions_trainval2014", release)), "--images", *zips]
    assert main([*argv, "--out", str(items), "--registry", overlay]) == 0
    params = yaml.safe_load((REPO / "params.yaml").read_text())["coco_benchmarks"]
    for name in COCO_BENCHMARKS:
        argv = ["build-coco-benchmark", "--name", name, "--raw", str(release), "--items", str(items)]
        argv += ["--config", json.dumps(params[name]), "--out", str(root / "coco" / name), "--registry", overlay]
        assert main(argv) == 0, name
    read = {name: BENCHMARKS[name].part("canonical").read for name in ORDER}
    return Sources(
        root=root,
        world=world,
        world_tables={name: read[name](root / "world" / name) for name in ORDER},
        coco_tables={name: read[name](root / "coco" / name) for name in ORDER},
        release=release,
        items=items,
    )


# ---------------------------------------------------------------------------------------------- ids by content


def _pixel_hash(pixels: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(pixels, dtype=np.uint8).tobytes()).hexdigest()


@dataclass
class Maps:
    """World ids -> coco ids: COCO images and captions, and each benchmark's added texts and images by content."""

    image: dict[int, int]
    caption: dict[int, int]
    texts: dict[str, dict[str, int]]  # benchmark -> text -> coco added caption id
    pixels: dict[str, dict[str, int]]  # benchmark -> pixel hash -> coco added image id
    world_text: dict[str, dict[int, str]]  # benchmark -> world caption id (its extras too) -> text
    world_pixels: dict[str, dict[int, str]]  # benchmark -> world image id (its extras too) -> pixel hash

    def images(self, ids) -> np.ndarray:
        return np.array([self.image[int(i)] for i in ids], dtype=np.int64)

    def captions(self, ids) -> np.ndarray:
        return np.array([self.caption[int(i)] for i in ids], dtype=np.int64)

    def added_captions(self, bench: str, ids) -> np.ndarray:
        return np.array([self.texts[bench][self.world_text[bench][int(i)]] for i in ids], dtype=np.int64)

    def added_images(self, bench: str, ids) -> np.ndarray:
        return np.array([self.pixels[bench][self.world_pixels[bench][int(i)]] for i in ids], dtype=np.int64)


def _world_store(s: Sources, bench: str) -> ItemStore:
    extra = s.root / "world" / bench / "extra_items"
    return ItemStore(s.root / "world" / "items", [extra] if extra.is_dir() else [], image_size=s.world.images.shape[1])


def _coco_store(s: Sources, bench: str) -> ItemStore:
    extra = s.root / "coco" / bench / "extra_items"
    return ItemStore(s.items, [extra] if extra.is_dir() else [], image_size=s.world.images.shape[1])


@pytest.fixture(scope="module")
def maps(sources) -> Maps:
    """The id maps, read back from the release through the coco source's items (not from the exporter's code)."""
    s = sources
    coco_images = pd.read_parquet(s.items / "images.parquet")
    coco_captions = pd.read_parquet(s.items / "captions.parquet")
    store = _coco_store(s, "bison")
    by_pixels = {_pixel_hash(p): i for i, p in enumerate(s.world.images)}
    decoded = store.image_batch(coco_images["image_id"].to_numpy(np.int64))
    image = {by_pixels[_pixel_hash(p)]: int(c) for p, c in zip(decoded, coco_images["image_id"])}
    world_caps = s.world.caption_table.set_index("caption_id")["text"]
    caption = {int(w): int(c) for w, c in zip(coco_captions["sentid"], coco_captions["caption_id"])}
    assert list(coco_captions["text"]) == [world_caps.loc[w] for w in coco_captions["sentid"]]
    texts, pixels, world_text, world_pixels = {}, {}, {}, {}
    for bench in ORDER:
        extra = s.root / "coco" / bench / "extra_items"
        if extra.is_dir():
            caps = pd.read_parquet(extra / "captions.parquet")
            texts[bench] = dict(zip(caps["text"].astype(str), caps["caption_id"].astype(int)))
            ims = pd.read_parquet(extra / "images.parquet")
            got = _coco_store(s, bench).image_batch(ims["image_id"].to_numpy(np.int64))
            pixels[bench] = {_pixel_hash(p): int(i) for p, i in zip(got, ims["image_id"])}
        world_text[bench] = {int(k): str(v) for k, v in world_caps.items()}
        world_pixels[bench] = {i: _pixel_hash(p) for i, p in enumerate(s.world.images)}
        wextra = s.root / "world" / bench / "extra_items"
        if wextra.is_dir():
            wcaps = pd.read_parquet(wextra / "captions.parquet")
            world_text[bench] |= dict(zip(wcaps["caption_id"].astype(int), wcaps["text"].astype(str)))
            wims = pd.read_parquet(wextra / "images.parquet")
            got = _world_store(s, bench).image_batch(wims["image_id"].to_numpy(np.int64))
            world_pixels[bench] |= {int(i): _pixel_hash(p) for p, i in zip(got, wims["image_id"])}
    return Maps(image, caption, texts, pixels, world_text, world_pixels)


def test_the_ids_map_as_documented_and_the_images_are_the_worlds_pixels(sources, maps):
    # every world image comes back (pixel for pixel: PNG in the zips) at its documented COCO id, every caption
    # with its text at its documented annotation id and with its world id as Karpathy sentid
    assert maps.image == {w: w + release_format.IMAGE_ID_OFFSET for w in range(len(sources.world.images))}
    world_caps = sources.world.caption_table["caption_id"].astype(int)
    assert maps.caption == {w: w + release_format.CAPTION_ID_OFFSET for w in world_caps}
    images = pd.read_parquet(sources.items / "images.parquet")
    splits = sources.world.image_table.set_index("image_id")["split"]
    assert list(images["split"]) == [splits.loc[i - release_format.IMAGE_ID_OFFSET] for i in images["image_id"]]
    assert set(images.loc[images["split"] == "train", "coco_split"]) == {"train2014"}
    assert set(images.loc[images["split"] != "train", "coco_split"]) == {"val2014"}
    assert all(f"_{i:012d}.jpg" in n for i, n in zip(images["image_id"], images["file_name"]))


def _assert_equal(got: pd.DataFrame, want: pd.DataFrame, what: str) -> None:
    """Equal values, number for number (dtypes aside: the two sources type a string column each their way)."""
    got, want = got.reset_index(drop=True), want.reset_index(drop=True)
    for col in want.columns:
        g, w = got[col], want[col]
        if g.dtype.kind in "fi" or w.dtype.kind in "fi":
            dtype = np.float64 if "f" in g.dtype.kind + w.dtype.kind else np.int64
            g, w = g.to_numpy(dtype), w.to_numpy(dtype)
        else:
            g, w = g.astype(object).to_numpy(), w.astype(object).to_numpy()
        assert len(g) == len(w), f"{what}: {col}: {len(g)} rows; expected {len(w)}"
        np.testing.assert_array_equal(g, w, err_msg=f"{what}: column {col}")


# ---------------------------------------------------------------------------------------------- the release


def test_the_release_holds_every_file_the_coco_source_reads_with_its_md5_and_count(sources):
    overlay = load_registry(sources.release / export.OVERLAY)
    needed = {k for b in COCO_BENCHMARKS.values() for k in b.released_keys} | set(export.COCO_KEYS)
    assert set(overlay) == needed  # exactly the files the coco source reads: nothing else is claimed
    listed = {}
    for line in (sources.release / export.MD5_LIST).read_text().splitlines():
        md5, rel = line.split("  ./")
        listed[rel] = md5
    for key, entry in overlay.items():
        path = sources.release / entry.mirror_path
        assert listed.pop(str(entry.mirror_path)) == entry.md5 == file_md5(path), key
        assert entry.url == released_file(key).url and entry.in_mirror
        if path.suffix != ".zip":
            assert entry.records == count_records(path)[0], key
    assert listed == {}
    # the papers' own declarations refuse the world's files: only the overlay declares them
    sts = sources.release / released_file("cxc_sts_val").mirror_path
    with pytest.raises(ChecksumMismatchError, match=released_file("cxc_sts_val").md5):
        loader_of(released_file("cxc_sts_val"))(sts, task="sts", split="val")
    with registry_overlay(sources.release / export.OVERLAY):
        assert (
            len(loader_of(released_file("cxc_sts_val"))(sts, task="sts", split="val")) == overlay["cxc_sts_val"].records
        )


def test_the_export_is_byte_identical_when_run_again(sources, tmp_path):
    argv = ["export-release", "--world", str(sources.root / "world"), "--out", str(tmp_path / "again")]
    assert main(argv) == 0
    for name in (export.MD5_LIST, export.OVERLAY):
        assert (tmp_path / "again" / name).read_bytes() == (sources.release / name).read_bytes(), name


def test_fetch_serves_the_release_from_a_loopback_http_mirror_with_the_overlay_md5s(sources, serve, tmp_path, capsys):
    overlay = str(sources.release / export.OVERLAY)
    with serve(sources.release) as url:
        for key in ("cxc_sts_val", "karpathy_splits"):
            out = tmp_path / "raw" / key
            assert main(["fetch", "--key", key, "--mirror", url, "--out", str(out), "--registry", overlay]) == 0
            assert file_md5(out) == file_md5(sources.release / released_file(key).mirror_path)
        # without the overlay the real file's md5 is expected, and the world's file is refused
        out = tmp_path / "refused.csv"
        assert main(["fetch", "--key", "cxc_sts_val", "--mirror", url, "--out", str(out)]) == 2
    assert "md5 checksum mismatch" in capsys.readouterr().err and not out.exists()


def test_an_overlay_may_only_redeclare_known_files_at_their_places(sources, tmp_path, capsys):
    text = (sources.release / export.OVERLAY).read_text()
    moved = tmp_path / "moved.yaml"
    moved.write_text(text.replace("sts_val.csv", "sts_val2.csv", 1))
    with pytest.raises(InputError, match=r"moved\.yaml: files\[\d+\] \(key 'cxc_sts_val'\): url .*; expected"):
        overlay_registry(moved)
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text(text.replace("key: cxc_sts_val", "key: cxc_sts_other", 1))
    with pytest.raises(InputError, match=r"unknown\.yaml: .*'cxc_sts_other'\): not a key of"):
        overlay_registry(unknown)
    argv = ["build-coco-benchmark", "--name", "cxc", "--raw", str(sources.release), "--items", str(sources.items)]
    assert main([*argv, "--out", str(tmp_path / "cxc"), "--registry", str(unknown)]) == 2
    assert not (tmp_path / "cxc").exists()
    missing = tmp_path / "nowhere.yaml"
    assert main([*argv, "--out", str(tmp_path / "cxc"), "--registry", str(missing)]) == 2
    assert f"{missing}: no such file" in capsys.readouterr().err
    assert released_file("cxc_sts_val").md5 == "21e7ac8ad278d71ba84748f79748e77a"  # the packaged one again


# ---------------------------------------------------------------------------------------------- canonical tables


def test_bison_annotations_round_trip(sources, maps):
    w, c = sources.world_tables["bison"], sources.coco_tables["bison"]
    want = w["annotations"].drop(columns=["caption_fits_false"]).copy()
    want["caption_id"] = maps.captions(want["caption_id"])
    for col in ("image_id_0", "image_id_1", "true_image_id", "false_image_id"):
        want[col] = maps.images(want[col])
    names = pd.read_parquet(sources.items / "images.parquet").set_index("image_id")["file_name"]
    for k in (0, 1):
        want[f"image_filename_{k}"] = names.loc[want[f"image_id_{k}"]].to_numpy()
    _assert_equal(c["annotations"], want, "bison annotations")
    _assert_equal(c["items"], _mapped_items(w["items"], maps), "bison items")
    assert "pairs" not in c and "stages" not in c  # NOT_CARRIED["bison"]


def _mapped_items(items: pd.DataFrame, maps: Maps, bench: str | None = None) -> pd.DataFrame:
    """(kind, item_id) with world ids mapped (captions through the added texts of `bench` when given), sorted."""
    out = []
    for kind, ids in items.groupby("kind", sort=False)["item_id"]:
        if kind == "image":
            mapped = maps.images(ids)
        else:
            mapped = maps.added_captions(bench, ids) if bench else maps.captions(ids)
        out.append(pd.DataFrame({"kind": kind, "item_id": np.unique(mapped)}))
    return pd.concat(out, ignore_index=True)


def _sorted_items(items: pd.DataFrame) -> pd.DataFrame:
    order = {k: i for i, k in enumerate(items["kind"].drop_duplicates())}
    return items.assign(_k=items["kind"].map(order)).sort_values(["_k", "item_id"]).drop(columns="_k")


def _listed(values) -> str:
    return json.dumps([v if isinstance(v, str) else int(v) for v in values])


def test_mcic_examples_round_trip_their_options_as_added_texts(sources, maps):
    w, c = sources.world_tables["mcic"], sources.coco_tables["mcic"]
    want = w["examples"].drop(columns=["world_split"]).copy()
    coco_ids = maps.images(want["image_id"])
    want["example_id"] = [f"{i}_{e.rpartition('_')[2]}" for i, e in zip(coco_ids, want["example_id"])]
    want["image"] = [f"COCO_train2014_{i:012d}.jpg" for i in coco_ids]  # MCIC names every image so
    want["image_id"] = coco_ids
    want["caption_id"] = maps.added_captions("mcic", want["caption_id"])
    want["option_caption_ids"] = [list(maps.added_captions("mcic", ids)) for ids in want["option_caption_ids"]]
    got = c["examples"].copy()
    for col in ("options", "option_caption_ids"):
        got[col], want[col] = [_listed(v) for v in got[col]], [_listed(v) for v in want[col]]
    _assert_equal(got[list(want.columns)], want, "mcic examples")
    _assert_equal(c["answer_positions"], w["answer_positions"], "mcic answer positions")
    wanted = _mapped_items(w["items"], maps, "mcic")  # duplicate texts of the world are one added caption
    _assert_equal(_sorted_items(c["items"]), _sorted_items(wanted), "mcic items")


def test_eccv_positives_queries_and_gallery_round_trip(sources, maps):
    w, c = sources.world_tables["eccv"], sources.coco_tables["eccv"]
    want = w["positives"].copy()
    want["image_id"], want["caption_id"] = maps.images(want["image_id"]), maps.captions(want["caption_id"])
    assert sorted(set(want["source"])) == ["cxc", "eccv", "original"]
    _assert_equal(c["positives"], want, "eccv positives")
    want = w["queries"].copy()
    want["query_id"] = [
        maps.image[int(q)] if d == "image_to_caption" else maps.caption[int(q)]
        for q, d in zip(want["query_id"], want["direction"])
    ]
    _assert_equal(c["queries"], want, "eccv queries")
    _assert_equal(c["items"], _mapped_items(w["items"], maps), "eccv items")
    assert not any(t in c for t in ("annotations", "pm_vectors", "pm_positives"))  # NOT_CARRIED["eccv"]


def test_cxc_rated_pairs_and_positives_round_trip_with_their_exact_ratings(sources, maps):
    from itmbench.papers.cxc.released import ITEM_COLUMNS, pairs_schema

    w, c = sources.world_tables["cxc"], sources.coco_tables["cxc"]
    for task, (a, b) in ITEM_COLUMNS.items():
        want = w[task][list(pairs_schema(task))].copy()
        for col in (a, b):
            ids = want[f"{col}_id"]
            if col.startswith("caption"):
                want[f"{col}_id"] = maps.captions(ids)
                want[col] = [f"COCO_val2014:sentid:{i}" for i in want[f"{col}_id"]]
            else:
                want[f"{col}_id"] = maps.images(ids)
                want[col] = [f"COCO_val2014_{i:012d}.jpg" for i in want[f"{col}_id"]]
        _assert_equal(c[task], want, f"cxc {task}")  # agg_score to the last bit: positives by the same thresholds
    want = w["positives"].copy()
    kinds = {"sts": ("caption", "caption"), "sis": ("image", "image"), "sits": ("caption", "image")}
    kinds["original"] = kinds["sits"]
    for k, col in enumerate(("a_id", "b_id")):
        want[col] = [
            maps.image[int(i)] if kinds[t][k] == "image" else maps.caption[int(i)]
            for i, t in zip(want[col], want["task"])
        ]
    keys = ["split", "task", "a_id", "b_id"]
    _assert_equal(c["positives"].sort_values(keys), want.sort_values(keys), "cxc positives")
    _assert_equal(c["items"], _mapped_items(w["items"], maps), "cxc items")
    settings = dict(zip(c["config"]["key"], c["config"]["value"]))
    world_settings = dict(zip(w["config"]["key"], w["config"]["value"]))
    assert {k: settings[k] for k in ("score_split", "sits_query")} == {
        k: world_settings[k] for k in ("score_split", "sits_query")
    }


def test_bivlc_sugarcrepe_and_instances_round_trip(sources, maps):
    w, c = sources.world_tables["bivlc"], sources.coco_tables["bivlc"]
    cols = ["id", "subset", "type", "subtype", "image_id", "caption", "negative_caption"]
    want = w["sugarcrepe"][cols].copy()
    want["image_id"] = maps.images(want["image_id"])
    want["caption_id"] = maps.added_captions("bivlc", w["sugarcrepe"]["caption_id"])
    want["negative_caption_id"] = maps.added_captions("bivlc", w["sugarcrepe"]["negative_caption_id"])
    want["filename"] = [f"{i:012d}.jpg" for i in want["image_id"]]
    _assert_equal(c["sugarcrepe"][list(want.columns)], want, "bivlc sugarcrepe")
    inst = w["instances"]
    want = inst[["id", "caption", "negative_caption", "type", "subtype"]].copy()
    want["image"] = maps.added_images("bivlc", inst["image"])  # the parquet carries both images
    want["negative_image"] = maps.added_images("bivlc", inst["negative_image"])
    want["caption_id"] = maps.added_captions("bivlc", inst["caption_id"])
    want["negative_caption_id"] = maps.added_captions("bivlc", inst["negative_caption_id"])
    _assert_equal(c["instances"][list(want.columns)], want, "bivlc instances")
    # the link the release does not carry is found again by text: every instance's SugarCrepe row
    np.testing.assert_array_equal(c["instances"]["sugarcrepe_match"], inst["sugarcrepe_id"])
    assert (c["instances"]["sugarcrepe_id"] == -1).all() and not c["sugarcrepe"]["in_bivlc"].any()


def test_sugarcrepe_instances_round_trip(sources, maps):
    w, c = sources.world_tables["sugarcrepe"], sources.coco_tables["sugarcrepe"]
    want = w["instances"].drop(columns=["negative_structure", "edit"]).copy()
    want["image_id"] = maps.images(want["image_id"])
    want["filename"] = [f"{i:012d}.jpg" for i in want["image_id"]]
    for col in ("caption_id", "negative_caption_id"):
        want[col] = maps.added_captions("sugarcrepe", want[col])
    got = c["instances"].sort_values("id", kind="stable")
    _assert_equal(got[list(want.columns)], want.sort_values("id", kind="stable"), "sugarcrepe instances")


def test_retrieval_gallery_and_original_positives_round_trip(sources, maps):
    w, c = sources.world_tables["retrieval"], sources.coco_tables["retrieval"]
    want = w["positives"][w["positives"]["positive_set"] == "original"].copy()  # not 'truth': NOT_CARRIED
    want["image_id"], want["caption_id"] = maps.images(want["image_id"]), maps.captions(want["caption_id"])
    _assert_equal(c["positives"], want, "retrieval positives")
    _assert_equal(c["items"], _mapped_items(w["items"], maps), "retrieval items")


VG = ("vg_relation", "vg_attribution")


def test_aro_vg_instances_and_options_round_trip_with_the_worlds_pixels(sources, maps):
    w, c = sources.world_tables["aro"], sources.coco_tables["aro"]
    inst = w["instances"][w["instances"]["dataset"].isin(VG)]
    assert set(inst["dataset"]) == set(VG) and set(c["instances"]["dataset"]) == set(VG)
    want = inst.copy()
    want["image_id"] = maps.added_images("aro", inst["image_id"])  # the whole-image crop is the world's image
    want["caption_id"] = maps.added_captions("aro", inst["caption_id"])
    _assert_equal(c["instances"], want, "aro instances")
    opts = w["options"][w["options"]["id"].isin(inst["id"])].copy()
    opts["caption_id"] = maps.added_captions("aro", opts["caption_id"])
    _assert_equal(c["options"], opts, "aro options")


# ---------------------------------------------------------------------------------------------- identity


def _unit(seed_bytes: bytes) -> np.ndarray:
    v = np.random.default_rng(int.from_bytes(hashlib.sha256(seed_bytes).digest()[:8], "little")).standard_normal(DIM)
    return (v / np.linalg.norm(v)).astype(np.float32)


def content_cache(store: ItemStore, items: pd.DataFrame, path: Path) -> Path:
    """A model that is a function of content: a caption's vector from its text, an image's from its pixels."""
    image_ids = np.unique(items.loc[items["kind"] == "image", "item_id"].to_numpy(np.int64))
    caption_ids = np.unique(items.loc[items["kind"] == "caption", "item_id"].to_numpy(np.int64))
    pixels = store.image_batch(image_ids)
    emb = {
        "image_ids": image_ids,
        "image_emb": np.stack([_unit(b"image" + np.ascontiguousarray(p).tobytes()) for p in pixels]).reshape(-1, DIM),
        "caption_ids": caption_ids,
        "caption_emb": np.stack([_unit(b"text" + t.encode()) for t in store.texts(caption_ids)]).reshape(-1, DIM),
    }
    write_embeddings(path, emb)
    return path


@pytest.fixture(scope="module")
def scored(sources) -> dict[tuple[str, str], tuple[pd.DataFrame, dict]]:
    """(benchmark, source) -> per-instance scores and metrics of `score-benchmark` with the content model."""
    s, out = sources, {}
    for bench in ORDER:
        for source, store in (("world", _world_store(s, bench)), ("coco", _coco_store(s, bench))):
            d = s.root / "scores" / source
            bench_dir = s.root / source / bench
            cache = content_cache(store, pd.read_parquet(bench_dir / "items.parquet"), d / f"{bench}.npz")
            argv = ["score-benchmark", "--name", bench, "--bench", str(bench_dir), "--embeddings", str(cache)]
            argv += ["--out", str(d / f"{bench}.parquet"), "--metrics", str(d / f"{bench}.json"), "--model", "m"]
            assert main([*argv, "--config", json.dumps(SCORE)]) == 0, (bench, source)
            out[bench, source] = (pd.read_parquet(d / f"{bench}.parquet"), read_json(d / f"{bench}.json"))
    return out


def _metrics(doc: dict) -> dict:
    """A metrics file without the parts that name the run (model, files)."""
    return {k: v for k, v in doc.items() if k not in ("model", "scores", "embeddings")}


def test_bison_scores_and_metrics_are_the_worlds(scored, maps):
    (w, wm), (c, cm) = scored["bison", "world"], scored["bison", "coco"]
    want = w.copy()
    want["caption_id"] = maps.captions(w["caption_id"])
    want["true_image_id"], want["false_image_id"] = maps.images(w["true_image_id"]), maps.images(w["false_image_id"])
    _assert_equal(c, want, "bison scores")
    assert _metrics(cm) == _metrics(wm)


def test_mcic_scores_and_metrics_are_the_worlds(scored, maps):
    (w, wm), (c, cm) = scored["mcic", "world"], scored["mcic", "coco"]
    want = w.copy()
    want["image_id"] = maps.images(w["image_id"])
    want["example_id"] = [f"{i}_{e.rpartition('_')[2]}" for i, e in zip(want["image_id"], w["example_id"])]
    for j in range(5):
        want[f"caption_id_{j}"] = maps.added_captions("mcic", w[f"caption_id_{j}"])
    _assert_equal(c, want, "mcic scores")
    assert _metrics(cm) == _metrics(wm)


def test_eccv_scores_and_metrics_are_the_worlds_but_pmrp(scored, maps):
    (w, wm), (c, cm) = scored["eccv", "world"], scored["eccv", "coco"]
    i2t = (w["direction"] == "image_to_caption").to_numpy()
    want = w.drop(columns=["n_pm", "pm_depth", "pmrp", "ranked_ids", "ranked_scores"]).copy()
    want["query_id"] = [maps.image[int(q)] if d else maps.caption[int(q)] for q, d in zip(w["query_id"], i2t)]
    _assert_equal(c[list(want.columns)], want, "eccv scores")
    # the rankings: the world ranks deeper (its PMRP depth), the shared prefix is the same ids and dot products
    for d, wi, ws, ci, cs in zip(i2t, w["ranked_ids"], w["ranked_scores"], c["ranked_ids"], c["ranked_scores"]):
        k = min(len(wi), len(ci))
        mapped = [maps.caption[int(i)] if d else maps.image[int(i)] for i in wi[:k]]
        assert list(ci[:k]) == mapped and list(cs[:k]) == list(ws[:k])
    world_metrics = {k: v for k, v in wm["metrics"].items() if not k.startswith("pmrp")}
    assert cm["metrics"] == world_metrics and any(k.startswith("pmrp") for k in wm["metrics"])


def test_cxc_scores_and_metrics_are_the_worlds(scored, maps):
    (w, wm), (c, cm) = scored["cxc", "world"], scored["cxc", "coco"]
    image_query = {("retrieval", "i2t"), ("retrieval", "i2i"), ("correlation", "sis"), ("correlation", "sits")}
    image_item = {("correlation", "sis")}
    want = w.copy()
    keys = list(zip(w["part"], w["task"]))
    want["query_id"] = [
        maps.image[int(q)] if k in image_query else maps.caption[int(q)] for q, k in zip(w["query_id"], keys)
    ]
    want["item_id"] = [
        -1 if p == "retrieval" else maps.image[int(i)] if k in image_item else maps.caption[int(i)]
        for i, k, p in zip(w["item_id"], keys, w["part"])
    ]
    _assert_equal(c, want, "cxc scores")
    assert _metrics(cm) == _metrics(wm)


def test_bivlc_scores_and_metrics_are_the_worlds(scored, maps):
    (w, wm), (c, cm) = scored["bivlc", "world"], scored["bivlc", "coco"]
    sc_cols = ["sugarcrepe_id", "subset", "type", "subtype", "image_id", "caption_id", "negative_caption_id"]
    want = w[[*sc_cols, "s_c0_i0", "s_c1_i0"]].copy()
    want["image_id"] = maps.images(w["image_id"])
    for col in ("caption_id", "negative_caption_id"):
        want[col] = maps.added_captions("bivlc", w[col])
    _assert_equal(c.loc[c["sugarcrepe_id"] >= 0, list(want.columns)], want, "bivlc: SugarCrepe rows")
    # a BiVLC instance: the world scores it on its SugarCrepe row's items, the release on its own (same content)
    members = w[w["in_bivlc"]]
    want = members[["bivlc_id", "subset", "type", "subtype", "s_c0_i0", "s_c1_i0", "s_c0_i1", "s_c1_i1"]].copy()
    want["image_id"] = maps.added_images("bivlc", members["image_id"])
    want["negative_image_id"] = maps.added_images("bivlc", members["negative_image_id"])
    for col in ("caption_id", "negative_caption_id"):
        want[col] = maps.added_captions("bivlc", members[col])
    _assert_equal(c.loc[c["sugarcrepe_id"] < 0, list(want.columns)], want, "bivlc: BiVLC rows")
    assert _metrics(cm) == _metrics(wm)


def test_sugarcrepe_scores_and_metrics_are_the_worlds(scored, maps):
    (w, wm), (c, cm) = scored["sugarcrepe", "world"], scored["sugarcrepe", "coco"]
    want = w.copy()
    want["image_id"] = maps.images(w["image_id"])
    for col in ("caption_id", "negative_caption_id"):
        want[col] = maps.added_captions("sugarcrepe", w[col])
    _assert_equal(c.sort_values("id", kind="stable"), want.sort_values("id", kind="stable"), "sugarcrepe scores")
    assert _metrics(cm) == _metrics(wm)


def test_retrieval_scores_and_metrics_are_the_worlds_on_the_original_positives(scored, maps):
    (w, wm), (c, cm) = scored["retrieval", "world"], scored["retrieval", "coco"]
    want = w[w["positive_set"] == "original"].copy()
    i2t = (want["direction"] == "i2t").to_numpy()
    want["query_id"] = [maps.image[int(q)] if d else maps.caption[int(q)] for q, d in zip(want["query_id"], i2t)]
    _assert_equal(c, want, "retrieval scores")
    assert cm["metrics"] == {"original": wm["metrics"]["original"]} and "truth" in wm["metrics"]


def test_aro_vg_scores_and_metrics_are_the_worlds(scored, maps):
    (w, wm), (c, cm) = scored["aro", "world"], scored["aro", "coco"]
    want = w[w["dataset"].isin(VG)].copy()
    want["image_id"] = maps.added_images("aro", want["image_id"])
    _assert_equal(c, want, "aro scores")
    vg = {k: v for k, v in wm["metrics"].items() if k.split(":")[0].removesuffix("_items") in VG}
    assert cm["metrics"] == vg and any(k.startswith("coco_order") for k in wm["metrics"])


def test_every_benchmark_is_compared_and_what_is_not_carried_is_named():
    assert set(NOT_CARRIED) == set(COCO_BENCHMARKS) == set(ORDER)


# ---------------------------------------------------------------------------------------------- JPEG, refusals


def test_jpeg_images_read_back_close_to_the_worlds_pixels_not_equal(tmp_path):
    world = generate_world(unit_world({"n_train": 2, "n_val": 1, "n_test": 2}))
    release = release_format.Release(release_format.WorldIds.of(world.image_table), world.images, "jpeg")
    files = export.coco_files(world.image_table, world.caption_table, release)
    zips = {}
    for key, split in (("coco_train2014_images", "train2014"), ("coco_val2014_images", "val2014")):
        zips[split] = tmp_path / f"{split}.zip"
        zips[split].write_bytes(files[key])
    (tmp_path / "k.zip").write_bytes(files["karpathy_splits"])
    (tmp_path / "c.zip").write_bytes(files["coco_captions_trainval2014"])
    from itmbench.sources.coco import write_coco_items

    write_coco_items(tmp_path / "k.zip", tmp_path / "c.zip", zips, tmp_path / "items")
    ids = pd.read_parquet(tmp_path / "items" / "images.parquet")["image_id"].to_numpy(np.int64)
    got = ItemStore(tmp_path / "items", image_size=world.images.shape[1]).image_batch(ids).astype(np.int16)
    diff = got - world.images[ids - release_format.IMAGE_ID_OFFSET].astype(np.int16)
    psnr = 10 * np.log10(255**2 / np.mean(diff.astype(np.float64) ** 2))
    assert np.abs(diff).max() > 0  # lossy: an image model would see other pixels than the world's
    assert 30 < psnr < 45, psnr  # quality 95 with COCO's 4:2:0 chroma: close, never exact


def test_an_eccv_without_its_cxc_positives_or_a_cxc_with_averaged_pairs_cannot_be_exported(sources):
    from itmbench.papers.cxc import export as cxc_export
    from itmbench.papers.eccv import export as eccv_export

    release = release_format.Release(release_format.WorldIds.of(sources.world.image_table), sources.world.images)
    eccv = dict(sources.world_tables["eccv"])
    eccv["positives"] = eccv["positives"][eccv["positives"]["source"] != "cxc"]
    with pytest.raises(ValueError, match="none of source 'cxc'.*build ECCV with its CxC dependency"):
        eccv_export.export(eccv, release)
    cxc = dict(sources.world_tables["cxc"])
    cxc["sis"] = cxc["sis"].assign(n_rows=np.where(np.arange(len(cxc["sis"])) == 3, 2, 1))
    with pytest.raises(ValueError, match=r"cxc sis val: line 5 averages 2 rows"):
        cxc_export.export(cxc, release)
