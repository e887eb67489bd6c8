"""SugarCrepe's released files -> the canonical tables the world's construction writes, scored by the same summarize.

Needs the offline mirror (tests/conftest.py `mirror_dir`: skipped with its reason when it is absent).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from itmbench.negatives.captions import SUBSETS
from itmbench.papers.published import load_published, published_value
from itmbench.papers.sugarcrepe import canonical as sc_canonical
from itmbench.papers.sugarcrepe import score as sc_score
from itmbench.papers.sugarcrepe.released import load_gpt4v_answers, load_sugarcrepe

SUGARCREPE = "raw.githubusercontent.com/RAIVNLab/sugar-crepe/main"
BIVLC_RESULTS = "raw.githubusercontent.com/IMirandaM/BiVLC/main/results"
# BiVLC Table 1, SugarCrepe row: retrieval examples per subset (one per instance), 7,512 in all
TABLE1_COUNTS = {
    "replace_obj": 1652,
    "replace_att": 788,
    "replace_rel": 1406,
    "swap_obj": 246,
    "swap_att": 666,
    "add_obj": 2062,
    "add_att": 692,
}


@pytest.fixture(scope="module")
def released(mirror_dir: Path) -> pd.DataFrame:
    return load_sugarcrepe(mirror_dir / SUGARCREPE / "data")


def test_released_files_give_the_canonical_instances_table(released):
    inst = sc_canonical.from_released(released)["instances"]
    world_columns = [c for c in sc_canonical.INSTANCE_COLUMNS if c not in sc_canonical.WORLD_ONLY_COLUMNS["instances"]]
    assert list(inst.columns) == world_columns  # the world's columns, less the world-only ones
    # the released swap_obj.json lacks key 108, which BiVLC's copy and GPT-4V's answers have: 7,511, not 7,512
    assert inst["subset"].value_counts().to_dict() == {**TABLE1_COUNTS, "swap_obj": 245}
    assert 108 not in set(inst.loc[inst["subset"] == "swap_obj", "id"])
    assert not inst.duplicated(["subset", "id"]).any()
    assert (inst["caption_id"] == -1).all() and (inst["negative_caption_id"] == -1).all()
    assert (inst["type"] + "_" + inst["subtype"] == inst["subset"]).all()
    assert (inst["caption"] != inst["negative_caption"]).all()


def test_gpt4v_answers_through_the_papers_scorer_give_the_published_92_19(mirror_dir: Path):
    answers = load_gpt4v_answers(mirror_dir / SUGARCREPE / "gpt-4v-results")
    pooled = {}
    for order in ("positive-first", "negative-first"):
        summary = sc_score.summarize(sc_score.gpt4v_correct(answers, order), n_boot=100)
        metrics = summary["metrics"]
        assert summary["n_instances"] == 7512 and set(SUBSETS) <= set(metrics)
        pooled[order] = metrics["pooled"]["value"]
        naive = np.mean([100 * answers[(answers["order"] == order) & (answers["subset"] == s)]["correct"].mean()
                         for s in SUBSETS])  # fmt: skip
        assert metrics["mean_over_subtypes"]["value"] == pytest.approx(naive)
    published = published_value("sugarcrepe", "BiVLC Section 5.3", "GPT-4V", "SugarCrepe")
    assert round(sum(pooled.values()) / 2, 2) == published == 92.19


def test_score_predictions_carries_the_papers_metrics(mirror_dir: Path):
    from itmbench.papers.predictions import ScoreOptions, score_predictions

    folder = mirror_dir / SUGARCREPE / "gpt-4v-results"
    system = score_predictions("sugarcrepe_gpt4v", folder, options=ScoreOptions(n_boot=100))["systems"]["GPT-4V"]
    for order in ("positive-first", "negative-first"):
        paper = system["sugarcrepe"][order]
        assert paper["pooled"]["value"] == pytest.approx(system["metrics"][order]["value"])
        for s in SUBSETS:
            assert paper[s]["value"] == pytest.approx(system["by_subset"][s][order]["value"])


def test_released_clip_correctness_gives_the_published_sugarcrepe_column(mirror_dir: Path):
    from itmbench.papers.bivlc.released import read_sugarcrepe_correct

    correct = read_sugarcrepe_correct(mirror_dir / BIVLC_RESULTS / "SUGARCREPE_CORRECT_ViT-B-32.csv")
    by_subset = correct.assign(subset=correct["type"] + "_" + correct["subtype"])
    metrics = sc_score.summarize(by_subset, n_boot=100)["metrics"]
    assert round(metrics["pooled"]["value"], 2) == published_value("sugarcrepe", "BiVLC Table 3", "CLIP", "SugarCrepe")
    assert round(metrics["mean_over_subtypes"]["value"], 2) == 73.08  # what the pooled column does not show


def test_coco_source_build_adds_the_caption_texts(mirror_dir: Path, released):
    from itmbench.papers.sugarcrepe import coco as sc_coco
    from itmbench.papers.sugarcrepe.coco import SugarCrepeCocoConfig
    from itmbench.params import make_config
    from itmbench.sources.coco_benchmarks import IMAGE_COLUMNS, CocoItems

    raw = mirror_dir  # the mirror has the registry's layout (<host>/<url path>)
    ids = np.unique(released["image_id"].to_numpy())
    images = pd.DataFrame({c: [""] * len(ids) for c in IMAGE_COLUMNS}).assign(image_id=ids)
    captions = pd.DataFrame(
        {"caption_id": [1], "sentid": [1], "image_id": [int(ids[0])], "split": ["test"], "text": ["x"]}
    )
    out = sc_coco.from_released(raw, CocoItems(images, captions), make_config(SugarCrepeCocoConfig))
    inst = out.tables["instances"]
    assert len(inst) == 7511 and (inst["caption_id"] >= 4_000_000_000).all()
    texts = dict(zip(out.added.caption_table()["caption_id"], out.added.caption_table()["text"]))
    assert all(texts[c] == t for c, t in zip(inst["negative_caption_id"], inst["negative_caption"]))
    kinds = out.tables["items"]["kind"].value_counts().to_dict()
    assert kinds["image"] == len(ids) and kinds["caption"] == len(texts)


def test_published_values_are_transcribed_from_bivlc():
    pub = load_published("sugarcrepe")
    assert set(pub["table"]) == {"BiVLC Table 2", "BiVLC Table 3", "BiVLC Section 5.3"}
    assert (pub["column"] == "SugarCrepe").all() and pub["note"].str.startswith("from BiVLC").all()
    bivlc = load_published("bivlc")
    for table in ("Table 2", "Table 3"):
        theirs = bivlc[(bivlc["table"] == table) & (bivlc["column"] == "SugarCrepe")].set_index("row")["value"]
        ours = pub[pub["table"] == f"BiVLC {table}"].set_index("row")["value"]
        pd.testing.assert_series_equal(ours, theirs, check_names=False)
