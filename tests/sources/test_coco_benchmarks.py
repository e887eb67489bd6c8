"""The coco source's benchmarks from the released files: counts, schemas, scoring, errors.

COCO itself (images, captions) is not on these machines: the tests make a COCO items table whose
ids are the ones the released files name (the ECCV package gives the test split's caption -> image
pairs, CxC's c2i_original rows the val split's). The released files come from the offline mirror
where it exists (skipped otherwise); BISON's annotations and BiVLC's Hugging Face parquet are not
mirrored and are made here in their released formats.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from PIL import Image

from itmbench.cli import main
from itmbench.models.registry import RandomEncoder
from itmbench.papers.bison import canonical as bison_canonical
from itmbench.papers.bison import coco as coco_bison
from itmbench.papers.bison import score as bison_score
from itmbench.papers.bivlc import canonical as bivlc_canonical
from itmbench.papers.bivlc import coco as coco_bivlc
from itmbench.papers.bivlc import score as bivlc_score
from itmbench.papers.bivlc.released import read_bivlc_results
from itmbench.papers.cxc import canonical as cxc_canonical
from itmbench.papers.cxc import coco as coco_cxc
from itmbench.papers.cxc import score as cxc_score
from itmbench.papers.cxc.released import load_cxc
from itmbench.papers.eccv import canonical as eccv_canonical
from itmbench.papers.eccv import coco as coco_eccv
from itmbench.papers.eccv import score as eccv_score
from itmbench.papers.eccv.released import load_eccv_positives, read_coco_test_ids
from itmbench.papers.mcic import canonical as mcic_canonical
from itmbench.papers.mcic import coco as coco_mcic
from itmbench.papers.mcic import score as mcic_score
from itmbench.papers.mcic.released import read_mcic_txt
from itmbench.papers.retrieval import canonical as retrieval_canonical
from itmbench.papers.retrieval import coco as coco_retrieval
from itmbench.params import make_config
from itmbench.scoring.embed import EmbeddingCache, write_embeddings
from itmbench.scoring.retrieval import score_retrieval
from itmbench.sources import coco_benchmarks as coco
from itmbench.sources import coco_registry
from itmbench.sources.coco_benchmarks import CocoItems, UnmappedRecordError
from itmbench.sources.fetch import raw_path
from itmbench.sources.released import load_registry

REPO = Path(__file__).resolve().parents[2]
DIM = 16


def _file_name(coco_split: str, image_id: int) -> str:
    return f"COCO_{coco_split}_{image_id:012d}.jpg"


def _png(colour: tuple[int, int, int]) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (8, 8), colour).save(buf, format="PNG")
    return buf.getvalue()


@pytest.fixture(scope="module")
def raw_dir(mirror_dir, tmp_path_factory) -> Path:
    """data/raw: links to every mirrored released file, plus made BISON annotations and BiVLC parquet shards."""
    raw = tmp_path_factory.mktemp("raw")
    for key, rf in load_registry().items():
        src = mirror_dir / rf.mirror_path
        if rf.in_mirror and src.exists():
            dst = raw_path(key, raw)
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.symlink_to(src)
    return raw


@pytest.fixture(scope="module")
def items(raw_dir) -> CocoItems:
    """A COCO items table holding every image and caption the released files name (sentid = caption id, as COCO)."""
    eccv_dir = raw_path("eccv_coco_test_ids", raw_dir).parent
    test_ids = read_coco_test_ids(eccv_dir / "coco_test_ids.npy")
    orig = load_eccv_positives(eccv_dir, sources=["original"], directions=["caption_to_image"])
    caps = [orig.assign(split="test")[["caption_id", "image_id", "split"]]]
    test_images = np.unique(orig["image_id"].to_numpy())
    # two more captions of test images, outside coco_test_ids (Karpathy's test split has 25,010): the two
    # that ECCV's eccv_image_to_caption.json lists as positives of these images
    caps.append(pd.DataFrame({"caption_id": [144675, 467259], "image_id": [575916, 421999], "split": "test"}))
    sits_val = load_cxc(raw_path("cxc_sits_val", raw_dir), "sits", "val")
    val_orig = sits_val[sits_val["sampling_method"] == "c2i_original"]
    caps.append(pd.DataFrame({"caption_id": val_orig["caption_id"], "image_id": val_orig["image_id"], "split": "val"}))
    captions = pd.concat(caps, ignore_index=True).astype({"caption_id": "int64", "image_id": "int64"})
    captions = captions.assign(sentid=captions["caption_id"], text=[f"caption {c}" for c in captions["caption_id"]])
    rows = {int(i): ("val2014", "test") for i in test_images}
    rows.update({int(i): ("val2014", "val") for i in val_orig["image_id"]})
    sis_val = load_cxc(raw_path("cxc_sis_val", raw_dir), "sis", "val")
    rows.update({int(i): ("val2014", "val") for i in np.concatenate([sis_val["image1_id"], sis_val["image2_id"]])})
    for key in ("mcic_dev", "mcic_test"):
        for image_id in read_mcic_txt(raw_path(key, raw_dir))["image_id"]:
            rows.setdefault(int(image_id), ("train2014", "train"))
    sugar = pd.read_csv(raw_path("bivlc_sugarcrepe_test", raw_dir))
    for name in sugar["filename"]:
        rows.setdefault(int(name[:12]), ("val2014", "restval"))
    ids = np.array(sorted(rows), dtype=np.int64)
    images = pd.DataFrame(
        {
            "image_id": ids,
            "file_name": [_file_name(rows[i][0], i) for i in ids],
            "coco_split": [rows[i][0] for i in ids],
            "split": [rows[i][1] for i in ids],
            "path": [f"zips/{rows[i][0]}.zip::{_file_name(rows[i][0], i)}" for i in ids],
        }
    )
    captions = captions[["caption_id", "sentid", "image_id", "split", "text"]]
    assert len(test_ids) == 25_000
    return CocoItems(images, captions)


def _items_dir(items: CocoItems, d: Path) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    items.images.to_parquet(d / "images.parquet", index=False)
    items.captions.to_parquet(d / "captions.parquet", index=False)
    return d


def random_cache(items_table: pd.DataFrame, texts: dict[int, str], path: Path) -> EmbeddingCache:
    """A RandomEncoder cache of a benchmark's items: texts by their content, images by a seeded vector per id."""
    enc = RandomEncoder(DIM, seed=0)
    cap_ids = items_table.loc[items_table["kind"] == "caption", "item_id"].to_numpy(np.int64)
    img_ids = items_table.loc[items_table["kind"] == "image", "item_id"].to_numpy(np.int64)
    cap = enc.encode_texts([texts.get(int(c), f"caption {int(c)}") for c in cap_ids]).numpy()
    rng = np.random.default_rng(7)
    img = {int(i): v for i, v in zip(np.unique(img_ids), rng.standard_normal((len(np.unique(img_ids)), DIM)))}
    img_emb = np.stack([img[int(i)] / np.linalg.norm(img[int(i)]) for i in img_ids]).astype(np.float32)
    write_embeddings(path, {"image_ids": img_ids, "image_emb": img_emb, "caption_ids": cap_ids, "caption_emb": cap})
    return EmbeddingCache(path)


def _check_dtypes(frame: pd.DataFrame, schema: dict[str, str]) -> None:
    for col, dtype in schema.items():
        assert str(frame[col].dtype) == str(pd.Series([], dtype=dtype).dtype), (col, frame[col].dtype, dtype)


# ---------------------------------------------------------------------------------------------- ECCV


@pytest.fixture(scope="module")
def eccv_built(raw_dir, items):
    return coco_eccv.from_released(raw_dir, items, coco.NoConfig())


def test_eccv_from_the_package_files(eccv_built, raw_dir):
    t = eccv_built.tables
    assert set(t) == {"positives", "queries", "stages", "items"}
    stages = t["stages"].set_index(["direction", "stage"])["n"]
    outside = "eccv positives outside the gallery (kept: the package counts them in R)"
    assert stages["image_to_caption", outside] == 2 and stages["caption_to_image", outside] == 0
    assert t["queries"].groupby("direction").size().to_dict() == {"image_to_caption": 1_261, "caption_to_image": 1_332}
    kinds = t["items"]["kind"].value_counts().to_dict()
    assert kinds == {"image": 5_000, "caption": 25_000}
    loaded = load_eccv_positives(raw_path("eccv_coco_test_ids", raw_dir).parent)
    counts = t["positives"].groupby(["source", "direction"]).size()
    assert counts.to_dict() == loaded.groupby(["source", "direction"]).size().to_dict()
    assert counts["eccv", "image_to_caption"] == 22_550 and counts["eccv", "caption_to_image"] == 11_279
    _check_dtypes(t["positives"], eccv_canonical.SCHEMA)
    _check_dtypes(t["queries"], eccv_canonical.QUERY_COLUMNS)
    _check_dtypes(t["items"], eccv_canonical.ITEM_COLUMNS)


@pytest.mark.slow
def test_eccv_scores_without_pm_tables_and_says_pmrp_is_skipped(eccv_built, tmp_path):
    t = eccv_built.tables
    eccv_canonical.write(t, tmp_path / "eccv")
    back = eccv_canonical.read(tmp_path / "eccv")
    assert set(back) == {"positives", "queries", "stages", "items"}
    cache = random_cache(back["items"], {}, tmp_path / "emb.npz")
    scores = eccv_score.score_dual(back, cache)
    assert "pmrp" not in scores.columns
    summary = eccv_score.summarize(scores, n_boot=50)
    assert summary["notes"] == [eccv_score.PMRP_SKIPPED_NOTE]
    assert summary["eccv_queries"] == {"i2t": 1_261, "t2i": 1_332}
    assert summary["metrics"]["eccv_map_at_r_i2t"]["n"] == 1_261
    assert summary["metrics"]["original_r1_t2i"]["n"] == 25_000
    # naive reference: COCO 5K t2i R@1 = share of captions whose own image scores highest
    caps = t["items"].loc[t["items"]["kind"] == "caption", "item_id"].to_numpy()
    imgs = t["items"].loc[t["items"]["kind"] == "image", "item_id"].to_numpy()
    sims = cache.get("caption", caps) @ cache.get("image", imgs).T
    own = pd.Series(imgs).searchsorted(
        t["positives"]
        .query("source == 'original' and direction == 'caption_to_image'")
        .set_index("caption_id")
        .loc[caps, "image_id"]
        .to_numpy()
    )
    naive = float(np.mean(np.argmax(sims, axis=1) == own)) * 100
    assert summary["metrics"]["original_r1_t2i"]["value"] == pytest.approx(naive)
    assert 0.0 <= naive < 1.0  # random embeddings: chance is 1 in 5,000


def test_eccv_summarize_keeps_its_world_output_when_pmrp_is_there():
    scores = pd.DataFrame(
        {
            "direction": ["image_to_caption", "caption_to_image"],
            "query_id": [1, 2],
            "eccv_query": [True, True],
            "pmrp": [0.5, 1.0],
        }
    )
    summary = eccv_score.summarize(scores, n_boot=20)
    assert "notes" not in summary
    assert summary["metrics"]["pmrp"]["value"] == pytest.approx(75.0)


# ---------------------------------------------------------------------------------------------- CxC


@pytest.fixture(scope="module")
def cxc_built(raw_dir, items):
    return coco_cxc.from_released(raw_dir, items, make_config(coco_cxc.CxcCocoConfig))


def test_cxc_positives_match_the_loader_counts(cxc_built, raw_dir):
    t = cxc_built.tables
    pos = t["positives"]
    for task in ("sts", "sis", "sits"):
        for split in ("val", "test"):
            loaded = load_cxc(raw_path(f"cxc_{task}_{split}", raw_dir), task, split)
            n = int(((pos["task"] == task) & (pos["split"] == split)).sum())
            assert n == int(loaded["positive"].sum()), (task, split)
            assert len(t[task].query("split == @split")) == len(loaded)
            _check_dtypes(t[task], {c: d for c, d in cxc_canonical.pairs_schema(task).items()})
    assert int(((pos["task"] == "sits") & (pos["split"] == "test")).sum()) == 35_585
    original = pos[pos["task"] == "original"].groupby("split").size().to_dict()
    assert original == {"test": 25_000, "val": 25_000}  # the 2 captions outside coco_test_ids are not in the gallery
    assert t["items"]["kind"].value_counts().to_dict() == {"image": 5_000, "caption": 25_000}
    _check_dtypes(pos, cxc_canonical.POSITIVE_COLUMNS)
    assert (
        cxc_canonical._config_value(t, "score_split") == "test"
        and cxc_canonical._config_value(t, "sits_query") == "image"
    )


@pytest.mark.slow
def test_cxc_scores_every_task_on_the_coco_gallery(cxc_built, tmp_path):
    cxc_canonical.write(cxc_built.tables, tmp_path / "cxc")
    back = cxc_canonical.read(tmp_path / "cxc")
    assert "stages" not in back
    cache = random_cache(back["items"], {}, tmp_path / "emb.npz")
    scores = cxc_score.score_dual(back, cache)
    summary = cxc_score.summarize(scores, n_boot=20)
    m = summary["metrics"]
    assert m["i2t/coco/R@1"]["n"] == 5_000 and m["t2i/coco/R@1"]["n"] == 25_000
    sits_test = back["positives"].query("split == 'test' and task in ['sits', 'original']")
    assert m["t2i/cxc/R@1"]["n"] == 25_000  # every gallery caption has its own image
    assert m["i2t/cxc/R@1"]["n"] == len(np.unique(sits_test["b_id"]))
    for task in ("sts", "sis", "sits"):
        assert abs(m[f"{task}/spearman"]["value"]) < 5.0  # random embeddings: no correlation with the ratings


def test_cxc_reads_its_sentids_as_caption_ids_and_names_an_unknown_one(tmp_path, monkeypatch):
    # CxC's `COCO_val2014:sentid:N` is COCO's caption annotation id (the id ECCV Caption uses), not Karpathy's
    # sentid: the items below give the two different numbers, and the tables hold N
    # made files at the released files' places: the registry's md5 and count checks would refuse them
    monkeypatch.setattr("itmbench.papers.cxc.released.check_released", lambda path, key=None: None)
    monkeypatch.setattr("itmbench.papers.cxc.released.check_count", lambda path, n, unit, key=None: None)
    raw = tmp_path / "raw"
    folder = raw_path("cxc_sts_val", raw).parent
    folder.mkdir(parents=True)
    i1, i2 = _file_name("val2014", 1), _file_name("val2014", 2)
    rows = {
        "sts": ["caption1,caption2", "COCO_val2014:sentid:10,COCO_val2014:sentid:11,3.5,c2c_cocaption"],
        "sis": ["image1,image2", f"{i1},{i2},2.0,i2i_csim"],
        "sits": ["caption,image", f"COCO_val2014:sentid:10,{i1},4.9,c2i_original"],
    }
    for task, lines in rows.items():
        for split in ("val", "test"):
            (folder / f"{task}_{split}.csv").write_text(lines[0] + ",agg_score,sampling_method\n" + lines[1] + "\n")
    images = pd.DataFrame(
        {
            "image_id": [1, 2],
            "file_name": [_file_name("val2014", 1), _file_name("val2014", 2)],
            "coco_split": "val2014",
            "split": ["test", "test"],
            "path": "",
        }
    )
    captions = pd.DataFrame(
        {"caption_id": [10, 11], "sentid": [500, 501], "image_id": [1, 2], "split": "test", "text": ["a", "b"]}
    )
    cfg = make_config(coco_cxc.CxcCocoConfig, gallery_captions="split")
    t = coco_cxc.from_released(raw, CocoItems(images, captions), cfg).tables
    assert t["sts"]["caption1_id"].tolist() == [10, 10] and t["sts"]["caption2_id"].tolist() == [11, 11]
    assert t["sits"]["caption_id"].tolist() == [10, 10]
    header = rows["sts"][0] + ",agg_score,sampling_method"
    (folder / "sts_val.csv").write_text(header + "\nCOCO_val2014:sentid:10,COCO_val2014:sentid:99,1,c2c_isim\n")
    with pytest.raises(UnmappedRecordError, match=r"sts_val\.csv: line 2 column caption2: caption id 99 is not"):
        coco_cxc.from_released(raw, CocoItems(images, captions), cfg)


# ---------------------------------------------------------------------------------------------- MCIC


@pytest.fixture(scope="module")
def mcic_built(raw_dir, items):
    return coco_mcic.from_released(raw_dir, items, make_config(coco_mcic.McicCocoConfig))


def test_mcic_examples_and_added_option_texts(mcic_built, items):
    t, added = mcic_built.tables, mcic_built.added
    ex = t["examples"]
    assert ex.groupby("split", sort=False).size().to_dict() == {"dev": 9_999, "test": 10_253}
    assert set(t) == {"examples", "answer_positions", "construction", "items"}
    stages = t["construction"].set_index(["split", "stage"])["value"]
    renamed = "images whose file name is not COCO's (mapped by id)"
    assert stages["dev", "images"] == 2_384 and stages["test", "images"] == 2_621
    # the fixture's val2014 images are those of CxC's val and ECCV's test files; MCIC names them COCO_train2014
    assert stages["dev", renamed] == 169 and stages["test", renamed] == 185
    texts = added.caption_table().set_index("caption_id")["text"]
    for row in ex.sample(50, random_state=0).itertuples():
        assert [texts[c] for c in row.option_caption_ids] == list(row.options)
        assert texts[row.caption_id] == row.answer
    assert int(texts.index.min()) == make_config(coco_mcic.McicCocoConfig).id_offset
    assert len(texts) == len({o for opts in ex["options"] for o in opts})  # each distinct text once
    assert (ex["image_id"].to_numpy() == [int(name[-16:-4]) for name in ex["image"]]).all()
    dev = t["answer_positions"].query("split == 'dev'")
    assert dev["n"].sum() == 9_999
    assert dev.loc[dev["position"] == 3, "share"].iloc[0] * 100 == pytest.approx(22.7, abs=0.05)
    _check_dtypes(ex, {c: d for c, d in mcic_canonical._DTYPES["examples"].items() if c != "world_split"})


def test_mcic_scores_near_chance_with_random_embeddings(mcic_built, tmp_path):
    t = mcic_built.tables
    coco.write_extra_items(mcic_built.added, tmp_path / "mcic")
    mcic_canonical.write(t, tmp_path / "mcic")
    back = mcic_canonical.read(tmp_path / "mcic")
    texts = dict(zip(mcic_built.added.caption_table()["caption_id"], mcic_built.added.caption_table()["text"]))
    cache = random_cache(back["items"], texts, tmp_path / "emb.npz")
    scores = mcic_score.score_dual(back, cache)
    summary = mcic_score.summarize(scores)
    for split, n in (("dev", 9_999), ("test", 10_253)):
        cell = summary["metrics"][f"accuracy_{split}"]
        part = scores[scores["split"] == split]
        naive = 100 * float(
            np.mean(np.argmax(part[mcic_score.SCORE_COLUMNS].to_numpy(), axis=1) == part["answer_index"])
        )
        assert cell["n"] == n and cell["value"] == pytest.approx(naive)
        assert cell["lo"] < 20.0 < cell["hi"] or abs(cell["value"] - 20.0) < 2.0


def test_mcic_names_a_file_name_missing_from_the_items(raw_dir, items):
    first = read_mcic_txt(raw_path("mcic_dev", raw_dir)).iloc[0]
    images = items.images[items.images["image_id"] != first["image_id"]]
    expected = rf"mc_mscoco_dev\.txt: line 1 key image: image id {first['image_id']} is not in the COCO items"
    with pytest.raises(UnmappedRecordError, match=expected):
        coco_mcic.from_released(raw_dir, CocoItems(images, items.captions), make_config(coco_mcic.McicCocoConfig))


# ---------------------------------------------------------------------------------------------- retrieval


def test_retrieval_is_coco_5k_with_the_original_pairs(raw_dir, items, tmp_path):
    released = coco_retrieval.from_released(raw_dir, items, make_config(coco_retrieval.RetrievalCocoConfig))
    coco_registry.COCO_BENCHMARKS["retrieval"].write(released.tables, tmp_path / "retrieval")
    retrieval_tables = retrieval_canonical.read(tmp_path / "retrieval")
    table, positives = retrieval_tables["items"], retrieval_tables["positives"]
    assert table["kind"].value_counts().to_dict() == {"image": 5_000, "caption": 25_000}
    assert len(positives) == 25_000 and set(positives["positive_set"]) == {"original"}
    assert 144675 not in set(table["item_id"])  # Karpathy's extra test captions are not in COCO 5k
    cache = random_cache(table, {}, tmp_path / "emb.npz")
    scores = score_retrieval(table, positives, cache)
    per = scores.groupby("direction")["n_positives"].agg(["size", "min", "max"])
    assert per.loc["i2t"].tolist() == [5_000, 5, 5] and per.loc["t2i"].tolist() == [25_000, 1, 1]
    split_cfg = make_config(coco_retrieval.RetrievalCocoConfig, gallery_captions="split")
    assert len(coco_retrieval.from_released(raw_dir, items, split_cfg).tables["positives"]) == 25_002


# ---------------------------------------------------------------------------------------------- BISON


def _bison_file(raw: Path, items: CocoItems, n: int = 30) -> tuple[Path, list[dict]]:
    caps = items.captions[items.captions["split"] == "test"].iloc[:n]
    images = items.images.set_index("image_id")
    test_images = items.split_images("test")
    data = []
    for k, (cid, iid) in enumerate(zip(caps["caption_id"], caps["image_id"])):
        other = int(test_images[(np.searchsorted(test_images, iid) + 1) % len(test_images)])
        pair = [int(iid), other] if k % 2 == 0 else [other, int(iid)]
        cands = [{"image_id": i, "image_filename": images.loc[i, "file_name"]} for i in pair]
        data.append({"bison_id": k, "caption_id": int(cid), "image_candidates": cands, "true_image_id": int(iid)})
    path = raw_path("bison_annotations", raw)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"info": {"made": "by the test"}, "data": data}))
    return path, data


def test_bison_from_its_annotation_file_through_the_cli(items, tmp_path):
    raw = tmp_path / "raw"
    _, data = _bison_file(raw, items)
    items_dir = _items_dir(items, tmp_path / "items")
    out = tmp_path / "coco" / "bison"
    assert main(["build-coco-benchmark", "--name", "bison", "--raw", str(raw), "--items", str(items_dir),
                 "--config", "{}", "--out", str(out)]) == 0  # fmt: skip
    back = bison_canonical.read(out)
    assert set(back) == {"annotations", "items"} and not (out / "extra_items").exists()
    ann = back["annotations"]
    assert len(ann) == 30 and ann["true_index"].tolist() == [k % 2 for k in range(30)]
    _check_dtypes(ann, bison_canonical.ANNOTATION_SCHEMA)
    mtimes = {p.name: p.stat().st_mtime_ns for p in out.glob("*.parquet")}
    assert mtimes["items.parquet"] == max(mtimes.values())
    cache = random_cache(back["items"], {}, tmp_path / "emb.npz")
    scores = bison_score.score_dual(back, cache)
    naive = [
        float(cache.get("caption", [c])[0] @ cache.get("image", [t])[0])
        > float(cache.get("caption", [c])[0] @ cache.get("image", [f])[0])
        for c, t, f in zip(ann["caption_id"], ann["true_image_id"], ann["false_image_id"])
    ]
    assert scores["correct"].tolist() == naive
    assert bison_score.summarize(scores, n_boot=20)["metrics"]["bison"]["value"] == pytest.approx(100 * np.mean(naive))
    with pytest.raises(ValueError, match="audit needs the construction tables"):
        from itmbench.papers.registry import benchmark

        benchmark("bison").audit(None, back, {}, None)


def test_bison_names_an_unknown_caption_and_a_wrong_file_name(items, tmp_path):
    raw = tmp_path / "raw"
    path, data = _bison_file(raw, items, n=4)
    data[2]["caption_id"] = 123_456_789
    path.write_text(json.dumps({"data": data}))
    with pytest.raises(UnmappedRecordError, match=r"bison_annotations\.cocoval2014\.json: data\[2\] \(bison_id 2\): "
                       r"caption id 123456789 is not in the COCO items"):  # fmt: skip
        coco_bison.from_released(raw, items, coco.NoConfig())
    path, data = _bison_file(raw, items, n=4)
    data[1]["image_candidates"][0]["image_filename"] = "COCO_val2014_000000000001.jpg"
    path.write_text(json.dumps({"data": data}))
    with pytest.raises(UnmappedRecordError, match=r"data\[1\] \(bison_id 1\)\.image_candidates\[0\]: image_filename"):
        coco_bison.from_released(raw, items, coco.NoConfig())


# ---------------------------------------------------------------------------------------------- BiVLC


def _bivlc_parquet(raw_dir: Path, n: int = 6) -> pd.DataFrame:
    """BiVLC's Hugging Face layout (two shards) with the texts of its first released instances and tiny PNGs."""
    results = read_bivlc_results(raw_path("bivlc_results_clip_coco", raw_dir))
    rows = []
    for k, r in enumerate(results.iloc[:n].itertuples()):
        positive = _png((10, 20, 30)) if k < 2 else _png((k, 0, 0))  # the first two share their positive image
        rows.append(
            {
                "image": {"bytes": positive, "path": None},
                "caption": r.caption,
                "negative_caption": r.negative_caption,
                "negative_image": {"bytes": _png((0, k, 200)), "path": None},
                "type": r.type,
                "subtype": r.subtype,
            }
        )
    frame = pd.DataFrame(rows)
    for shard, part in enumerate((frame.iloc[: n // 2], frame.iloc[n // 2 :])):
        path = raw_path(f"bivlc_hf_test_{shard}", raw_dir)
        path.parent.mkdir(parents=True, exist_ok=True)
        part.to_parquet(path, index=False)
    return frame


def test_bivlc_through_the_cli_with_added_image_files(raw_dir, items, tmp_path):
    made = _bivlc_parquet(raw_dir)
    items_dir = _items_dir(items, tmp_path / "items")
    outs = []
    for run in ("a", "b"):
        out = tmp_path / run / "bivlc"
        assert main(["build-coco-benchmark", "--name", "bivlc", "--raw", str(raw_dir), "--items", str(items_dir),
                     "--config", '{"id_offset": 3000000000}', "--out", str(out)]) == 0  # fmt: skip
        outs.append(out)
    back = bivlc_canonical.read(outs[0])
    sc, inst = back["sugarcrepe"], back["instances"]
    assert len(sc) == 7_512 and len(inst) == len(made) == 6
    assert (inst["sugarcrepe_id"] == -1).all() and (inst["sugarcrepe_match"] >= 0).all()
    matched = sc.set_index("id").loc[inst["sugarcrepe_match"]]
    assert (matched["type"].to_numpy() == inst["type"].to_numpy()).all()
    extra_images = pd.read_parquet(outs[0] / "extra_items" / "images.parquet")
    extra_caps = pd.read_parquet(outs[0] / "extra_items" / "captions.parquet")
    assert list(extra_images.columns) == ["image_id", "split", "path"]
    assert len(extra_images) == 11  # 6 negatives + 5 distinct positives (two instances share theirs)
    assert inst.loc[0, "image"] == inst.loc[1, "image"] and extra_images["image_id"].min() == 3_000_000_000
    for p in extra_images["path"]:
        assert Path(p).read_bytes()[:4] == b"\x89PNG" and Path(p).parent == outs[0] / "extra_items" / "images"
    needed = set(back["items"]["item_id"])
    assert set(extra_caps["caption_id"]) <= needed and set(extra_images["image_id"]) <= needed
    assert set(sc["image_id"]) <= set(items.images["image_id"])
    for name in ("sugarcrepe.parquet", "instances.parquet", "items.parquet", "extra_items/captions.parquet"):
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes(), name
    texts = dict(zip(extra_caps["caption_id"], extra_caps["text"]))
    cache = random_cache(back["items"], texts, tmp_path / "emb.npz")
    scores = bivlc_score.score_dual(back, cache)
    assert len(scores) == 7_512 + 6 and int(scores["in_bivlc"].sum()) == 6
    summary = bivlc_score.summarize(scores, n_boot=20)
    assert summary["n_sugarcrepe"] == 7_512 and summary["n_bivlc"] == 6
    sugar = scores[scores["sugarcrepe_id"] >= 0]
    naive = 100 * float(np.mean(sugar["s_c0_i0"] > sugar["s_c1_i0"]))
    assert summary["metrics"]["sugarcrepe"]["value"] == pytest.approx(naive)
    own = scores[scores["sugarcrepe_id"] < 0].set_index("bivlc_id")
    c0, i1 = int(inst.loc[3, "caption_id"]), int(inst.loc[3, "negative_image"])
    ref = float(cache.get("caption", [c0])[0].astype(np.float64) @ cache.get("image", [i1])[0].astype(np.float64))
    assert own.loc[3, "s_c0_i1"] == pytest.approx(ref)
    assert summary["metrics"]["group"]["n"] == 6


def test_bivlc_names_a_missing_sugarcrepe_image(raw_dir, items):
    _bivlc_parquet(raw_dir)
    first = pd.read_csv(raw_path("bivlc_sugarcrepe_test", raw_dir))["filename"].iloc[0]
    images = items.images[items.images["image_id"] != int(first[:12])]
    with pytest.raises(UnmappedRecordError, match=rf"test_SugarCrepe\.csv: line 2 column filename '{first}'"):
        coco_bivlc.from_released(raw_dir, CocoItems(images, items.captions), make_config(coco_bivlc.BivlcCocoConfig))


# ---------------------------------------------------------------------------------------------- registry, params


def test_each_coco_build_reads_the_files_its_registry_entry_declares():
    from itmbench.negatives.captions import SUBSETS
    from itmbench.papers.registry import SUGARCREPE_KEYS

    assert set(SUGARCREPE_KEYS) == set(SUBSETS)  # the build reads one file per subset it builds
    assert set(SUGARCREPE_KEYS.values()) == set(coco_registry.COCO_BENCHMARKS["sugarcrepe"].released_keys)
    declared = load_registry()
    for entry in coco_registry.COCO_BENCHMARKS.values():
        assert entry.released_keys and set(entry.released_keys) <= set(declared), entry.name


def test_registry_configs_and_the_params_section():
    assert set(coco_registry.COCO_BENCHMARKS) == {
        "bison",
        "mcic",
        "eccv",
        "cxc",
        "bivlc",
        "sugarcrepe",
        "retrieval",
        "aro",
    }
    with pytest.raises(ValueError, match="unknown coco benchmark 'sugar'"):
        coco_registry.coco_benchmark("sugar")
    with pytest.raises(ValueError, match=r"coco_benchmarks.mcic: unknown keys \['offset'\]"):
        coco_registry.coco_benchmark("mcic").config({"offset": 1})
    with pytest.raises(ValueError, match="needs split 'test'"):
        coco_registry.coco_benchmark("cxc").config({"score_split": "val"})
    from itmbench.params import schema as params_schema

    project = params_schema()  # the schema with params.yaml's defaults (their one home)
    schema = project["properties"]["coco_benchmarks"]
    params = yaml.safe_load((REPO / "params.yaml").read_text())["coco_benchmarks"]
    for name, section in params.items():
        cfg = coco_registry.coco_benchmark(name).config(section)
        defaults = {k: v["default"] for k, v in schema["properties"][name].get("properties", {}).items()}
        assert {k: list(v) if isinstance(v, tuple) else v for k, v in vars(cfg).items()} == defaults


def test_each_build_reads_exactly_its_declared_released_files(raw_dir, items, monkeypatch):
    """The DAG gives a build only the files its entry declares: reading any other would race its fetch."""
    from itmbench.sources import fetch

    read: list[str] = []
    original = fetch.raw_path

    def recording(key, raw):
        read.append(key)
        return original(key, raw)

    monkeypatch.setattr(fetch, "raw_path", recording)  # every build finds its files through it
    for name in ("retrieval", "eccv", "cxc", "mcic"):
        read.clear()
        entry = coco_registry.coco_benchmark(name)
        entry.from_released(raw_dir, items, entry.config({}))
        assert set(read) == set(entry.released_keys), name
    declared = set(load_registry())
    assert all(set(e.released_keys) <= declared for e in coco_registry.COCO_BENCHMARKS.values())
