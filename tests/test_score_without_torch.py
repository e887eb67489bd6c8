"""The scoring jobs from embeddings on the CPU never import torch (its import was most of a job's time).

Each run is a fresh interpreter calling `itmbench.cli.main` the way a Snakemake job runs `itmbench
score-benchmark` (scores and their metrics in one job), on small benchmarks built here (retrieval among
them); at the end torch must not be in `sys.modules`. The tables it writes are the ones `score_dual` gives
in this process, and its metrics the ones `metrics-benchmark` computes from those tables.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from unit_world import unit_world

from itmbench.cli import main
from itmbench.io import write_parquet
from itmbench.papers.bison import build as bison_build
from itmbench.papers.bison import canonical as bison_canonical
from itmbench.papers.bison import score as bison_score
from itmbench.papers.bison.config import BisonConfig
from itmbench.papers.bivlc import build as bivlc_build
from itmbench.papers.bivlc import canonical as bivlc_canonical
from itmbench.papers.bivlc import score as bivlc_score
from itmbench.papers.bivlc.config import BiVLCConfig
from itmbench.papers.cxc import build as cxc_build
from itmbench.papers.cxc import canonical as cxc_canonical
from itmbench.papers.cxc import score as cxc_score
from itmbench.papers.cxc.config import CxcConfig
from itmbench.papers.eccv import build as eccv_build
from itmbench.papers.eccv import canonical as eccv_canonical
from itmbench.papers.eccv import score as eccv_score
from itmbench.papers.eccv.config import EccvConfig
from itmbench.papers.mcic import build as mcic_build
from itmbench.papers.mcic import canonical as mcic_canonical
from itmbench.papers.mcic import score as mcic_score
from itmbench.papers.mcic.config import MCICConfig
from itmbench.papers.retrieval import build as retrieval_build
from itmbench.papers.retrieval import canonical as retrieval_canonical
from itmbench.papers.retrieval import score as retrieval_score
from itmbench.papers.retrieval.config import RetrievalConfig
from itmbench.params import make_config
from itmbench.reading import read_json
from itmbench.scoring.embed import EmbeddingCache, write_embeddings
from itmbench.scoring.pairs import Shortlist, shortlist_pairs, write_pair_scores
from itmbench.world.generate import generate_world

WCFG = unit_world(n_train=60, n_val=10, n_test=40)
MODULES = {  # each benchmark's canonical tables (write, read) and its scoring
    "bison": (bison_canonical, bison_score),
    "bivlc": (bivlc_canonical, bivlc_score),
    "cxc": (cxc_canonical, cxc_score),
    "mcic": (mcic_canonical, mcic_score),
    "eccv": (eccv_canonical, eccv_score),
}
SCORE = {"ks": [1, 5, 10], "n_boot": 50, "seed": 0, "confidence": 0.95}

_RUN = """
import json, sys
from itmbench.cli import main
for argv in json.loads(sys.argv[1]):
    assert main(argv) == 0, argv
print(json.dumps(sorted(m for m in sys.modules if m == "torch" or m.startswith("torch."))))
"""


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """Every world benchmark and retrieval on a small world, written as the workflow writes them, and a cache of
    random unit embeddings of every item (BiVLC's added items too)."""
    root = tmp_path_factory.mktemp("score_without_torch")
    world = generate_world(WCFG)
    built = {
        "bison": bison_build.build(world, make_config(BisonConfig, vector_size=16, epochs=3), world_cfg=WCFG),
        "bivlc": bivlc_build.build(world, make_config(BiVLCConfig)),
        "cxc": cxc_build.build(world, make_config(CxcConfig), world_cfg=WCFG),
        "mcic": mcic_build.build(
            world,
            make_config(
                MCICConfig,
                pv_grid={"vector_size": [64], "epochs": [10]},
                neighbourhood=30,
                relation_margin=WCFG.relation_margin,
            ),
        ),
        "eccv": eccv_build.build(world, make_config(EccvConfig, annotator_source="world"), world_cfg=WCFG),
    }
    for name, tables in built.items():
        MODULES[name][0].write(tables, root / name)
    retrieval = retrieval_build.build(world, make_config(RetrievalConfig), world_cfg=WCFG)
    retrieval_canonical.write(retrieval, root / "retrieval")
    items = retrieval["items"]
    rng = np.random.default_rng(0)
    image_ids = np.concatenate([world.image_table["image_id"], built["bivlc"]["extra_images"]["image_id"]])
    caption_ids = np.concatenate([world.caption_table["caption_id"], built["bivlc"]["extra_captions"]["caption_id"]])

    def unit(n: int) -> np.ndarray:
        x = rng.normal(size=(n, 16)).astype(np.float32)
        return x / np.linalg.norm(x, axis=1, keepdims=True)

    emb = {
        "image_ids": image_ids.astype(np.int64),
        "image_emb": unit(len(image_ids)),
        "caption_ids": caption_ids.astype(np.int64),
        "caption_emb": unit(len(caption_ids)),
    }
    write_embeddings(root / "emb.npz", emb)
    # a cross scorer's scores of a shortlist of the retrieval gallery (the re-ranking path ranks with top_k)
    pairs = shortlist_pairs(items, Shortlist(EmbeddingCache(root / "emb.npz"), 4))
    write_pair_scores(root / "pairs.parquet", pairs, rng.normal(size=len(pairs)))
    return root


def test_score_jobs_from_embeddings_import_no_torch(inputs, tmp_path):
    emb, out = str(inputs / "emb.npz"), tmp_path

    def metrics(name: str) -> list[str]:
        return ["--metrics", str(out / f"{name}.json"), "--model", "m", "--config", json.dumps(SCORE)]

    runs = [
        ["score-benchmark", "--name", name, "--bench", str(inputs / name), "--embeddings", emb]
        + ["--out", str(out / f"{name}.parquet"), *metrics(name)]
        for name in [*MODULES, "retrieval"]
    ]
    retrieval = ["score-benchmark", "--name", "retrieval", "--bench", str(inputs / "retrieval")]
    runs.append(
        [*retrieval, "--pairs", str(inputs / "pairs.parquet"), "--shortlist", emb, "--shortlist-k", "4"]
        + ["--out", str(out / "reranked.parquet")]
    )
    done = subprocess.run(
        [sys.executable, "-c", _RUN, json.dumps(runs)], capture_output=True, text=True, check=False, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []  # not torch, nor any part of it

    # the same tables as scoring in this process (where torch may well be loaded), written the same way
    cache = EmbeddingCache(inputs / "emb.npz")
    here = {
        name: score.score_dual(canonical.read(inputs / name), cache) for name, (canonical, score) in MODULES.items()
    }
    here["retrieval"] = retrieval_score.score_dual(retrieval_canonical.read(inputs / "retrieval"), cache)
    for name, table in here.items():
        write_parquet(tmp_path / "here" / f"{name}.parquet", table)
        got, want = pd.read_parquet(out / f"{name}.parquet"), pd.read_parquet(tmp_path / "here" / f"{name}.parquet")
        pd.testing.assert_frame_equal(got, want, check_exact=True, obj=name)
    reranked = pd.read_parquet(out / "reranked.parquet")
    assert len(reranked) == len(here["retrieval"]) and (reranked["rank"] >= 1).all()

    # the metrics each job wrote beside its scores are those of the standalone metrics commands on those scores
    for name in [*MODULES, "retrieval"]:
        argv = ["metrics-benchmark", "--name", name, "--scores", str(out / f"{name}.parquet"), "--model", "m"]
        assert main([*argv, "--config", json.dumps(SCORE), "--out", str(tmp_path / "alone" / f"{name}.json")]) == 0
        assert read_json(out / f"{name}.json") == read_json(tmp_path / "alone" / f"{name}.json"), name
    assert read_json(out / "retrieval.json")["benchmark"] == "retrieval"
    assert sorted(read_json(out / "retrieval.json")["metrics"]) == ["original", "truth"]


def test_metrics_without_model_and_config_is_an_error(inputs, tmp_path):
    argv = ["score-benchmark", "--name", "bison", "--bench", str(inputs / "bison"), "--embeddings"]
    argv += [str(inputs / "emb.npz"), "--out", str(tmp_path / "s.parquet"), "--metrics", str(tmp_path / "m.json")]
    assert main(argv) == 2
    assert not (tmp_path / "s.parquet").exists() and not (tmp_path / "m.json").exists()
