"""The CLI's error contract, fuzzed (issue 18): every entry point fed a missing file, a folder for a file,
an output path under a file, bad option values, unknown names, bad params and corrupt files ends in exit 2
with one line naming what was wrong (argparse's usage error for an option refused at parse time), never a
traceback; an internal error prints its traceback and says it is a bug (exit 3).

Cases run in-process through `itmbench.cli.main` (fast); `test_through_a_subprocess` runs a few as a user
does, to prove no traceback reaches the terminal. Each case is one parametrize id `<command>:<class>:...`,
so `pytest tests/errors --collect-only -q` lists the cases per entry point.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from itmbench.cli import _args, build_parser, main
from itmbench.cli import report as report_cli
from itmbench.cli import world as world_cli
from itmbench.errors import EXIT_BUG, EXIT_INPUT, InputError
from itmbench.io import write_parquet
from itmbench.papers.retrieval import build as retrieval_build
from itmbench.papers.retrieval import canonical as retrieval_canonical
from itmbench.papers.retrieval.config import RetrievalConfig
from itmbench.params import make_config
from itmbench.scoring.embed import write_embeddings
from itmbench.world.generate import WorldConfig, generate_world, write_world

REPO = Path(__file__).resolve().parents[2]
TINY_WORLD = {"n_train": 6, "n_val": 2, "n_test": 6, "image_size": 16, "captions_per_image": 2}
SPEC_CLIP = json.dumps({"family": "open_clip", "arch": "itm-clip-tiny", "trainer": "contrastive"})
SPEC_COCA = json.dumps({"family": "coca", "arch": "itm-coca-tiny", "trainer": "coca"})
SPEC_FFNN = json.dumps({"family": "ffnn", "trainer": "ffnn", "upstream": "clip"})


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


SUBCOMMANDS = _subcommands()

# Each entry point with its input under test written as {in} (every other input missing or never reached);
# {out} is a fresh output path. A missing path and a folder are put in turn where {in} stands.
INPUTS: dict[str, list[str]] = {
    "world": ["--config", "{in}", "--out", "{out}"],  # {in}: the config is the input (see _input_value)
    "build-benchmark": ["--name", "bison", "--items", "{in}", "--world", "{}", "--config", "{}", "--out", "{out}"],
    "audit-benchmark": ["--name", "cxc", "--items", "{in}", "--bench", "{in}", "--world", "{}", "--config", "{}"]
    + ["--out-csv", "{out}.csv"],
    "world-calibration": ["--items", "{in}", "--world", "{}", "--out-csv", "{out}.csv"],
    "train": ["--model", "m", "--spec", SPEC_CLIP, "--items", "{in}", "--out", "{out}", "--train", "{}"]
    + ["--history", "{out}.json"],
    "embed": ["--model", "m", "--spec", SPEC_CLIP, "--items", "{in}", "--out", "{out}.npz"],
    "train-ffnn": ["--model", "m", "--spec", SPEC_FFNN, "--train-bench", "{in}", "--dev-bench", "{in}"]
    + ["--features", "{in}", "--out", "{out}", "--history", "{out}.json"],
    "score-benchmark": ["--name", "mcic", "--bench", "{in}", "--embeddings", "{in}", "--out", "{out}.parquet"],
    "bison-caption-metric": ["--metric", "bleu4", "--bench", "{in}", "--captions", "{in}", "--config", "{}"]
    + ["--score", "{}", "--out", "{out}.parquet", "--metrics", "{out}.json"],
    "metrics-benchmark": ["--name", "bivlc", "--scores", "{in}", "--model", "m", "--config", "{}"]
    + ["--out", "{out}.json"],
    "score-pairs": ["--name", "bison", "--bench", "{in}", "--model", "m", "--spec", SPEC_COCA, "--items", "{in}"]
    + ["--out", "{out}.parquet"],
    "table-benchmark": ["{in}", "--name", "bison", "--out-csv", "{out}.csv", "--title", "t"],
    "claims": ["--metrics-dir", "{in}", "--out-csv", "{out}.csv"],
    "diff-results": ["{in}", "{in}", "--out", "{out}.md"],
    "dvc-metrics": ["--root", "{in}"],
    "world-paper-tables": ["{in}", "--paper", "bivlc", "--out-dir", "{out}"],
    "world-paper-figures": ["{in}", "--paper", "cxc", "--out-dir", "{out}"],
    "trohn-text-table": ["{in}", "--out-csv", "{out}.csv"],
    "paired-tests": ["--name", "bivlc", "--scores", "a={in}", "--scores", "b={in}", "--pair", "a=b", "--config", "{}"]
    + ["--out-csv", "{out}.csv"],
    "gallery-paired": ["--name", "cxc", "--scores", "a={in}", "--scores", "b={in}", "--pair", "a=b", "--config", "{}"]
    + ["--out-csv", "{out}.csv"],
    "eccv-rank-tau": ["--scores", "a={in}", "--config", "{}", "--out-csv", "{out}.csv"],
    "cxc-figure-data": ["--figure", "figure3", "--raw", "{in}", "--out-csv", "{out}.csv"],
    "cxc-encoder-sts": ["--scores", "{in}", "--out-points", "{out}.points.csv", "--out-csv", "{out}.csv"],
    "cxc-figure": ["--figure", "figure3", "--data", "{in}", "--source", "world", "--out-png", "{out}.png"],
    "eccv-appendix-e": ["--bench", "{in}", "--scores", "clip={in}", "--out-table", "{out}.csv"]
    + ["--out-bias", "{out}-bias.csv"],
    "eccv-annotator-ranks": ["{in}", "--out-csv", "{out}.csv"],
    "eccv-positives-per-query": ["--bench", "{in}", "--out-csv", "{out}.csv"],
    "eccv-table2": ["--bench", "{in}", "--out-csv", "{out}.csv"],
    "eccv-annotator-similarity": ["--bench", "{in}", "--embeddings", "a={in}", "--embeddings", "b={in}"]
    + ["--config", "{}", "--out-csv", "{out}.csv"],
    "eccv-answer-shares": ["--bench", "{in}", "--out-csv", "{out}.csv"],
    "eccv-figure": ["--figure", "figureE2", "--data", "{in}", "--source", "world", "--out-png", "{out}.png"],
    "cxc-table1": ["--bench", "{in}", "--captions", "{in}", "--scores", "bow={in}", "--scores", "de_t2t={in}"]
    + ["--out-csv", "{out}.csv"],
    "mcic-lambda-search": ["--bench", "{in}", "--out-csv", "{out}.csv"],
    "mcic-optimize-pv": ["--items", "{in}", "--world", "{}", "--config", "{}", "--out-csv", "{out}.csv"]
    + ["--out-choice", "{out}.json"],
    "mcic-sweep": ["--sweep", "lambda_gen", "--train-bench", "{in}", "--bench", "{in}", "--features", "{in}"]
    + ["--captions", "{in}", "--out", "{out}.csv"],
    "mcic-sweep-table": ["--sweep", "sizes", "--data", "{in}", "--out-csv", "{out}.csv"],
    "bivlc-figure4-data": ["--scores", "clip_coco={in}", "--out-csv", "{out}.csv"],
    "bivlc-figure4": ["--data", "{in}", "--out-png", "{out}.png"],
    "bison-table2": ["--bench", "{in}", "--captions", "{in}", "--out-csv", "{out}.csv"],
    "bison-figure-data": ["--figure", "figure14", "--bench", "{in}", "--captions", "{in}", "--embeddings"]
    + ["m={in}", "--out-csv", "{out}.csv"],
    "bison-figure": ["--figure", "figure6", "--data", "{in}", "--out-png", "{out}.png"],
    "bison-figure8-data": ["--generated", "coca={in}", "--scores", "coca={in}", "--captions", "{in}", "--out-csv"]
    + ["{out}.csv"],
    "bison-figure4-data": ["--generated", "coca={in}", "--scenes", "{in}", "--caption-scores", "{in}", "--out-csv"]
    + ["{out}.csv"],
    "bison-generate-captions": ["--model", "coca", "--spec", SPEC_COCA, "--items", "{in}", "--captions", "{in}"]
    + ["--out", "{out}.parquet"],
    "bison-table4": ["--generated", "coca={in}", "--bison", "coca={in}", "--captions", "{in}", "--out-csv"]
    + ["{out}.csv"],
    "bison-feature-captioners": ["--tower", "clip", "--spec", SPEC_CLIP, "--items", "{in}", "--captions", "{in}"]
    + ["--bench", "{in}", "--captioners", "{}", "--out", "{out}.parquet"],
    "bison-table6": ["--cells", "clip={in}", "--captioners", '{"towers": ["clip"]}', "--out-csv", "{out}.csv"],
    "bison-perturbation-scores": ["--model", "random", "--spec", '{"family": "random"}', "--items", "{in}"]
    + ["--bench", "{in}", "--captions", "{in}", "--out", "{out}.parquet"],
    "notebook": ["--notebook", "{in}", "--out", "{out}.html"],
    "index": ["{in}", "--out", "{out}.html"],
    "fetch": ["--key", "bivlc_results_vit_b_32", "--mirror", "{in}", "--out", "{out}.csv"],
    "released-statistics": ["--paper", "bivlc", "--raw", "{in}", "--out-csv", "{out}.csv"],
    "released-paper-tables": ["--raw", "{in}", "--out-dir", "{out}"],
    "build-coco-benchmark": ["--name", "bison", "--raw", "{in}", "--items", "{in}", "--out", "{out}"],
    "export-release": ["--world", "{in}", "--out", "{out}"],
    "share": ["--root", "{in}"],
    "pull": ["--root", "{in}"],
    "score-predictions": ["ranked", "i2t={in}", "--positives", "{in}"],
    "train-diffusion": ["--items", "{in}", "--config", "{}", "--out", "{out}"],
    "train-recognizer": ["--items", "{in}", "--config", "{}", "--out", "{out}"],
    "generate-candidates": ["--items", "{in}", "--world", "{}", "--config", '{"generator": "diffusion"}']
    + ["--diffusion", "{in}", "--recognizer", "{in}", "--out", "{out}"],
    "filter-rates": ["--items", "{in}", "--world", "{}", "--config", "{}", "--diffusion", "{in}", "--recognizer"]
    + ["{in}", "--filter", "{}", "--out-csv", "{out}.csv", "--sample-out", "{out}"],
    "plot-negatives": ["--sample", "{in}", "--items", "{in}", "--out", "{out}.png"],
    "coco-items": ["--karpathy", "{in}", "--captions", "{in}", "--images", "train2014={in}", "--out", "{out}"],
    "coco-needed-items": ["{in}", "--items", "{in}", "--out", "{out}.parquet"],
    "coco-caption-negatives": ["--captions", "{in}", "--shard", "0", "--shards", "1", "--config", "{}"]
    + ["--out", "{out}.parquet"],
    "coco-merge-negatives": ["{in}", "--out", "{out}.parquet", "--summary-csv", "{out}.csv"],
    "coco-image-negatives": ["--negatives", "{in}", "--shard", "0", "--shards", "1", "--config", "{}"]
    + ["--out-dir", "{out}"],
    "coco-finetune": ["--model", "m", "--spec", SPEC_CLIP, "--train", "{}", "--items", "{in}", "--out", "{out}"]
    + ["--history", "{out}.json"],
    "make-small-models": ["--out", "{in}"],  # {in}: its output folder is the input it can get wrong (_input_value)
}
# world reads no file: its input is the params section (a negative split size, refused by name)
WORLD_BAD_CONFIG = json.dumps({"n_train": -3})

# Bad values per argument type (parse-time refusals); a NAME=VALUE type and choices get theirs below.
BAD_VALUES = {
    _args.open_fraction: ["0", "1", "1.5", "-0.5", "nan", "inf", "abc"],
    _args.positive_int: ["0", "-1", "1.5", "nan", "x"],
    _args.non_negative_int: ["-1", "2.5", "x"],
    _args.probability: ["-0.1", "1.5", "nan"],
    _args.devices_arg: ["0", "-2", "some"],
    _args.json_arg: ["not json", "[1, 2]", "3"],
    report_cli.model_kinds: ['{"clip": "weird"}', "[]"],
}


def _option_cases() -> list[tuple[str, str, str]]:
    """(command, option, bad value) of every validated option of every subcommand."""
    cases = []
    for name, parser in SUBCOMMANDS.items():
        for action in parser._actions:
            if not action.option_strings or action.dest == "help":
                continue
            option = action.option_strings[-1]
            if action.choices is not None:
                cases.append((name, option, "nosuch"))
            elif action.type in BAD_VALUES:
                cases += [(name, option, v) for v in BAD_VALUES[action.type]]
            elif getattr(action.type, "__name__", "").startswith("NAME="):
                cases += [(name, option, "noequals"), (name, option, "=value")]
                if name == "build-benchmark" and option == "--dep":  # --annotator-embeddings: any model name
                    cases.append((name, option, "nosuch=dir"))
            if action.nargs == "+" and action.type is _args.positive_int:
                cases.append((name, option, ""))  # an empty list (--ks with no K)
    return cases


OPTION_CASES = _option_cases()


def _lines(text: str) -> list[str]:
    """stderr without the log lines (timestamped INFO/DEBUG records)."""
    return [line for line in text.splitlines() if line.strip() and " INFO " not in line and " DEBUG " not in line]


def assert_input_error(capsys, rc: int, command: str, *named: str) -> str:
    """Exit 2, no traceback, and exactly one error line `itmbench <command>: error: ...` naming `named`."""
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    assert rc == EXIT_INPUT, err
    errors = [line for line in _lines(err) if ": error:" in line]
    assert len(errors) == 1, err
    assert errors[0].startswith(f"itmbench {command}: error: "), errors[0]
    for text in named:
        assert text in errors[0], (text, errors[0])
    return errors[0]


def assert_usage_error(capsys, argv: list[str], option: str) -> str:
    """argparse's refusal: exit 2, a usage line and one error line naming the option, no traceback."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    err = capsys.readouterr().err
    assert exc.value.code == EXIT_INPUT, err
    assert "Traceback" not in err and err.startswith("usage: itmbench"), err
    errors = [line for line in err.splitlines() if ": error:" in line]
    assert len(errors) == 1 and f"argument {option}" in errors[0], err
    return errors[0]


def _fill(argv: list[str], value: str, out: Path) -> list[str]:
    return [a.replace("{in}", value).replace("{out}", str(out)) for a in argv]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> dict[str, Path]:
    """Valid small inputs: a world, its retrieval benchmark, embeddings, per-query ranks, a metrics file, a
    report, a TROHN-Text shard, a TROHN-Text training summary, and a file (`afile`) for output paths under a file."""
    root = tmp_path_factory.mktemp("tiny")
    world = generate_world(make_config(WorldConfig, TINY_WORLD))
    write_world(world, root / "items")
    world_cfg = make_config(WorldConfig, TINY_WORLD)
    retrieval = retrieval_build.build(world, make_config(RetrievalConfig, split="test"), world_cfg=world_cfg)
    retrieval_canonical.write(retrieval, root / "retrieval")
    rng = np.random.default_rng(0)
    emb = {
        "image_ids": world.image_table["image_id"].to_numpy(np.int64),
        "caption_ids": world.caption_table["caption_id"].to_numpy(np.int64),
    }
    emb["image_emb"] = rng.normal(size=(len(emb["image_ids"]), 8)).astype(np.float32)
    emb["caption_emb"] = rng.normal(size=(len(emb["caption_ids"]), 8)).astype(np.float32)
    write_embeddings(root / "emb.npz", emb)
    argv = ["score-benchmark", "--name", "retrieval", "--bench", str(root / "retrieval")]
    assert main([*argv, "--embeddings", str(root / "emb.npz"), "--out", str(root / "ranks.parquet")]) == 0
    argv = ["metrics-benchmark", "--name", "retrieval", "--scores", str(root / "ranks.parquet"), "--model", "m"]
    assert main([*argv, "--config", '{"n_boot": 20}', "--out", str(root / "metrics" / "retrieval" / "m.json")]) == 0
    (root / "report.html").write_text("<html></html>\n", encoding="utf-8")
    shard = pd.DataFrame(
        {"caption_id": [1, 2], "subset": ["replace_obj", "swap_att"], "reason": ["ok", "ok"]}
        | {"negative_caption": ["a", "b"], "follows_template": [True, True]}
    )
    write_parquet(root / "shard.parquet", shard)
    history = {"model": "m", "trainer": "negclip", "samples": {"by_subset": {"replace_obj": 2, "add_att": 1}}}
    (root / "history.json").write_text(json.dumps(history), encoding="utf-8")  # a TROHN-Text training summary
    (root / "afile").write_text("a file where a folder should be\n", encoding="utf-8")
    return root


# -- missing file, folder for a file -------------------------------------------------------------------------


def _input_value(command: str, kind: str, tmp_path: Path) -> str:
    if command == "world":  # no input file: a params section with a negative split size
        return WORLD_BAD_CONFIG
    if command == "make-small-models":  # no input file: an output folder that is a file
        (tmp_path / "afile").write_text("a file where a folder should be\n", encoding="utf-8")
        return str(tmp_path / "afile")
    if kind == "missing":
        return str(tmp_path / "nowhere" / "missing")
    folder = tmp_path / "a-folder"
    folder.mkdir(exist_ok=True)
    return str(folder)


INPUT_CASES = [(c, k) for c in INPUTS for k in ("missing", "folder") if not (c == "world" and k == "folder")]


@pytest.mark.parametrize("command,kind", INPUT_CASES, ids=[f"{c}:input:{k}" for c, k in INPUT_CASES])
def test_a_missing_input_or_a_folder_for_it_is_one_line_naming_it(command, kind, tmp_path, capsys):
    value = _input_value(command, kind, tmp_path)
    rc = main([command, *_fill(INPUTS[command], value, tmp_path / "out")])
    named = "n_train" if command == "world" else value
    assert_input_error(capsys, rc, command, named)
    assert not (tmp_path / "out").exists()


def test_every_entry_point_has_input_cases():
    assert set(INPUTS) == set(SUBCOMMANDS)


# -- an output path under a file -----------------------------------------------------------------------------


OUTPUT_CASES = {
    "world": ["--config", json.dumps(TINY_WORLD), "--out", "{afile}/items"],
    "world:file-for-folder": ["--config", json.dumps(TINY_WORLD), "--out", "{afile}"],
    "build-benchmark:retrieval": ["--name", "retrieval", "--items", "{tiny}/items", "--world", json.dumps(TINY_WORLD)]
    + ["--config", "{}", "--out", "{afile}/r"],
    "score-benchmark:retrieval": [
        "--name",
        "retrieval",
        "--bench",
        "{tiny}/retrieval",
        "--embeddings",
        "{tiny}/emb.npz",
    ]
    + ["--out", "{afile}/s.parquet"],
    "metrics-benchmark:retrieval": ["--name", "retrieval", "--scores", "{tiny}/ranks.parquet", "--model", "m"]
    + ["--config", '{"n_boot": 20}', "--out", "{afile}/m.json"],
    "table-benchmark:retrieval": [
        "{tiny}/metrics/retrieval/m.json",
        "--name",
        "retrieval",
        "--out-csv",
        "{afile}/t.csv",
    ]
    + ["--title", "t"],
    "index": ["{tiny}/report.html", "--out", "{afile}/index.html"],
    "coco-merge-negatives": ["{tiny}/shard.parquet", "--out", "{afile}/n.parquet", "--summary-csv", "{afile}/s.csv"],
    "trohn-text-table": ["{tiny}/history.json", "--out-csv", "{afile}/table6.csv"],
    "make-small-models": ["--out", "{afile}/small"],
}


@pytest.mark.parametrize("case", list(OUTPUT_CASES), ids=lambda c: f"{c.split(':')[0]}:output-under-a-file:{c}")
def test_an_output_path_under_a_file_is_one_line_naming_it(case, tiny, capsys):
    argv = [a.replace("{afile}", str(tiny / "afile")).replace("{tiny}", str(tiny)) for a in OUTPUT_CASES[case]]
    command = case.split(":")[0]
    assert_input_error(capsys, main([command, *argv]), command, str(tiny / "afile"))
    assert (tiny / "afile").is_file()


# -- bad option values, unknown names ------------------------------------------------------------------------


@pytest.mark.parametrize("command,option,value", OPTION_CASES, ids=[f"{c}:option:{o}={v}" for c, o, v in OPTION_CASES])
def test_a_bad_option_value_is_refused_at_parse_time(command, option, value, capsys):
    argv = [command, option] if value == "" else [command, option, value]
    message = assert_usage_error(capsys, argv, option)
    assert message.startswith(f"itmbench {command}: error: argument {option}")


def test_no_numeric_option_is_left_unchecked():
    """Every option with a type has one of the validating types (a bare int or float accepts 0, -1, nan)."""
    for name, parser in SUBCOMMANDS.items():
        for action in parser._actions:
            assert action.type not in (int, float), f"{name} {action.option_strings}: use a type of cli._args"


def test_the_cases_cover_the_options_named_in_the_issue():
    covered = {(c, o) for c, o, _ in OPTION_CASES}
    for pair in [
        ("score-predictions", "--confidence"),
        ("score-predictions", "--n-boot"),
        ("score-predictions", "--ks"),
        ("score-predictions", "--seed"),
        ("train", "--threads"),
        ("claims", "--paper"),
        ("build-benchmark", "--name"),
        ("score-benchmark", "--name"),
        ("embed", "--devices"),
    ]:
        assert pair in covered, pair


def test_confidence_message_names_the_range(capsys):
    message = assert_usage_error(capsys, ["score-predictions", "ranked", "x", "--confidence", "1.5"], "--confidence")
    assert message.endswith("argument --confidence: expected a number in (0, 1), got 1.5")


def test_score_pairs_wants_one_benchmark_folder_per_name(tmp_path, capsys):
    argv = ["score-pairs", "--name", "eccv", "cxc", "--bench", str(tmp_path), "--model", "m", "--spec", SPEC_COCA]
    assert main([*argv, "--items", str(tmp_path), "--out", str(tmp_path / "p.parquet")]) == EXIT_INPUT
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert "2 --name for 1 --bench; expected one folder each" in err, err


def test_the_world_splits_the_cli_offers_are_the_worlds():
    from itmbench.world.generate import SPLITS

    assert world_cli.SPLITS == SPLITS


RUNTIME_NAMES = {
    "build-coco-benchmark:unknown-benchmark": ["build-coco-benchmark", "--name", "nosuch", "--raw", "{tiny}"]
    + ["--items", "{tiny}", "--out", "{out}"],
    "fetch:unknown-key": ["fetch", "--key", "nosuch", "--out", "{out}"],
    "train:unknown-family": ["train", "--model", "m", "--spec", '{"family": "nosuch"}', "--items", "{tiny}/items"]
    + ["--out", "{out}", "--train", "{}", "--history", "{out}.json"],
    "train:unknown-trainer": ["train", "--model", "m", "--spec", '{"family": "random", "trainer": "nosuch"}']
    + ["--items", "{tiny}/items", "--out", "{out}", "--train", "{}", "--history", "{out}.json"],
    "score-predictions:unknown-positive-set": ["score-predictions", "ranked", "{tiny}/ranks.parquet"]
    + ["--positives", "{tiny}/retrieval/positives.parquet", "--positive-set", "nosuch"],
    "build-benchmark:annotators-for-a-benchmark-without": ["build-benchmark", "--name", "retrieval"]
    + ["--items", "{tiny}/items", "--world", json.dumps(TINY_WORLD), "--config", "{}", "--out", "{out}"]
    + ["--annotator-embeddings", "clip={tiny}/emb.npz"],
    "build-benchmark:missing-annotator-embeddings": ["build-benchmark", "--name", "eccv", "--items", "{tiny}/items"]
    + ["--world", json.dumps(TINY_WORLD), "--config", "{}", "--out", "{out}"]
    + ["--annotator-embeddings", "clip={tiny}/nosuch.npz"],
}
RUNTIME_NAMED = {
    "build-coco-benchmark:unknown-benchmark": "nosuch",
    "fetch:unknown-key": "nosuch",
    "train:unknown-family": "nosuch",
    "train:unknown-trainer": "nosuch",
    "score-predictions:unknown-positive-set": "nosuch",
    "build-benchmark:annotators-for-a-benchmark-without": "retrieval",
    "build-benchmark:missing-annotator-embeddings": "nosuch.npz",
}


@pytest.mark.parametrize("case", list(RUNTIME_NAMES), ids=lambda c: c.replace(":", ":name:", 1))
def test_an_unknown_name_the_parser_cannot_list_is_refused_by_name(case, tiny, tmp_path, capsys):
    argv = [a.replace("{tiny}", str(tiny)).replace("{out}", str(tmp_path / "out")) for a in RUNTIME_NAMES[case]]
    assert_input_error(capsys, main(argv), argv[0], RUNTIME_NAMED[case])
    assert not (tmp_path / "out").exists() and not (tmp_path / "out.csv").exists()


# -- params through the CLI ----------------------------------------------------------------------------------

PARAMS_CASES = {
    "world:nan-noise": (["world", "--config", '{"noise": NaN}', "--out", "{out}"], "noise"),
    "world:inf-caption-weight": (
        ["world", "--config", '{"caption_kinds": {"single": Infinity, "relation": 1, "pair": 1, "count": 1}}']
        + ["--out", "{out}"],
        "caption_kinds.single",
    ),
    "world:min-above-max": (["world", "--config", '{"min_objects": 3, "max_objects": 2}', "--out", "{out}"], "min"),
    "world:all-weights-zero": (
        ["world", "--config", '{"caption_kinds": {"single": 0, "relation": 0, "pair": 0, "count": 0}}']
        + ["--out", "{out}"],
        "caption_kinds",
    ),
    "world:negative-split": (["world", "--config", '{"n_test": -1}', "--out", "{out}"], "n_test"),
    "world:zero-split": (["world", "--config", '{"n_val": 0}', "--out", "{out}"], "n_val"),
    "world:unknown-key": (["world", "--config", '{"n_tset": 5}', "--out", "{out}"], "n_tset"),
    "metrics-benchmark:retrieval-confidence-one": (
        ["metrics-benchmark", "--name", "retrieval", "--scores", "{tiny}/ranks.parquet", "--model", "m"]
        + ["--config", '{"confidence": 1}', "--out", "{out}.json"],
        "confidence",
    ),
    "metrics-benchmark:retrieval-empty-ks": (
        ["metrics-benchmark", "--name", "retrieval", "--scores", "{tiny}/ranks.parquet", "--model", "m"]
        + ["--config", '{"ks": []}', "--out", "{out}.json"],
        "ks",
    ),
    "metrics-benchmark:retrieval-nan-n-boot": (
        ["metrics-benchmark", "--name", "retrieval", "--scores", "{tiny}/ranks.parquet", "--model", "m"]
        + ["--config", '{"n_boot": NaN}', "--out", "{out}.json"],
        "n_boot",
    ),
    "metrics-benchmark:n-boot-zero": (
        ["metrics-benchmark", "--name", "bivlc", "--scores", "{tiny}/ranks.parquet", "--model", "m"]
        + ["--config", '{"n_boot": 0}', "--out", "{out}.json"],
        "n_boot",
    ),
    "score-benchmark:retrieval-metrics-confidence": (
        ["score-benchmark", "--name", "retrieval", "--bench", "{tiny}/retrieval", "--embeddings", "{tiny}/emb.npz"]
        + ["--out", "{out}.parquet"]
        + ["--metrics", "{out}.json", "--model", "m", "--config", '{"confidence": 1.5}'],
        "confidence",
    ),
    "metrics-benchmark:negative-seed": (
        ["metrics-benchmark", "--name", "bivlc", "--scores", "{tiny}/ranks.parquet", "--model", "m"]
        + ["--config", '{"seed": -1}', "--out", "{out}.json"],
        "score params (--config): seed: -1 is less than the minimum of 0",
    ),
    "build-benchmark:cxc-threshold-off-scale": (
        ["build-benchmark", "--name", "cxc", "--items", "{tiny}/items", "--world", "{}"]
        + ["--config", '{"threshold_sts": 5.5}', "--out", "{out}"],
        "threshold_sts",
    ),
    "build-benchmark:mcic-bleu-threshold": (
        ["build-benchmark", "--name", "mcic", "--items", "{tiny}/items", "--world", "{}"]
        + ["--config", '{"bleu_threshold": 1.5}', "--out", "{out}"],
        "bleu_threshold",
    ),
    "build-benchmark:bivlc-nan-probability": (
        ["build-benchmark", "--name", "bivlc", "--items", "{tiny}/items", "--world", "{}"]
        + ["--config", '{"p_extra_object": NaN}', "--out", "{out}"],
        "p_extra_object",
    ),
    "build-benchmark:world-min-above-max": (
        [
            "build-benchmark",
            "--name",
            "bison",
            "--items",
            "{tiny}/items",
            "--world",
            '{"min_objects": 4, "max_objects": 1}',
        ]
        + ["--config", "{}", "--out", "{out}"],
        "min_objects",
    ),
    "audit-benchmark:eccv-probabilities": (
        ["audit-benchmark", "--name", "eccv", "--items", "{tiny}/items", "--bench", "{tiny}", "--world", "{}"]
        + ["--config", '{"answer_probs_fit": [0.5, 0.5, 0.5, 0.5]}', "--out-csv", "{out}.csv"],
        "answer_probs_fit",
    ),
    "train:nan-lr": (
        ["train", "--model", "m", "--spec", SPEC_CLIP, "--items", "{tiny}/items", "--out", "{out}"]
        + ["--train", '{"lr": NaN}', "--history", "{out}.json"],
        "lr",
    ),
    "train:beta-one": (
        ["train", "--model", "m", "--spec", SPEC_CLIP, "--items", "{tiny}/items", "--out", "{out}"]
        + ["--train", '{"beta2": 1.0}', "--history", "{out}.json"],
        "beta2",
    ),
    "train:spec-inf-option": (
        ["train", "--model", "m", "--spec", '{"family": "coca", "options": {"caption_loss_weight": Infinity}}']
        + ["--items", "{tiny}/items", "--out", "{out}", "--train", "{}", "--history", "{out}.json"],
        "options.caption_loss_weight",
    ),
}


@pytest.mark.parametrize("case", list(PARAMS_CASES), ids=lambda c: c.replace(":", ":params:", 1))
def test_bad_params_through_the_cli_are_refused_naming_the_key(case, tiny, tmp_path, capsys):
    argv, key = PARAMS_CASES[case]
    argv = [a.replace("{tiny}", str(tiny)).replace("{out}", str(tmp_path / "out")) for a in argv]
    assert_input_error(capsys, main(argv), argv[0], key)
    assert not any(tmp_path.iterdir())


# -- corrupt files -------------------------------------------------------------------------------------------


def _corrupt(kind: str, tiny: Path, tmp: Path) -> tuple[list[str], str]:
    """(argv, text the message must contain) of one corrupt-input case."""
    out = str(tmp / "out")
    if kind == "table-benchmark:not-utf8":
        bad = tmp / "m.json"
        bad.write_bytes(b'{"model": "m\xe4", "metrics": {}}')
        return ["table-benchmark", str(bad), "--name", "bison", "--out-csv", out + ".csv", "--title", "t"], "UTF-8"
    if kind == "table-benchmark:malformed-json":
        bad = tmp / "m.json"
        bad.write_text('{"model": "m", "metrics": {', encoding="utf-8")
        return ["table-benchmark", str(bad), "--name", "bison", "--out-csv", out + ".csv", "--title", "t"], str(bad)
    if kind == "table-benchmark:retrieval-empty-json":
        bad = tmp / "m.json"
        bad.write_bytes(b"")
        return ["table-benchmark", str(bad), "--name", "retrieval", "--out-csv", out + ".csv", "--title", "t"], str(bad)
    if kind == "metrics-benchmark:retrieval-not-parquet":
        bad = tmp / "ranks.parquet"
        bad.write_bytes(b"PAR1 this is no parquet file")
        argv = ["metrics-benchmark", "--name", "retrieval", "--scores", str(bad), "--model", "m", "--config", "{}"]
        return [*argv, "--out", out + ".json"], "parquet"
    if kind == "metrics-benchmark:retrieval-header-only":
        bad = tmp / "ranks.parquet"
        write_parquet(bad, pd.read_parquet(tiny / "ranks.parquet").iloc[:0])
        argv = ["metrics-benchmark", "--name", "retrieval", "--scores", str(bad), "--model", "m", "--config", "{}"]
        return [*argv, "--out", out + ".json"], str(bad)
    if kind == "metrics-benchmark:wrong-columns":
        argv = ["metrics-benchmark", "--name", "bison", "--scores", str(tiny / "ranks.parquet"), "--model", "m"]
        return [*argv, "--config", "{}", "--out", out + ".json"], str(tiny / "ranks.parquet")
    if kind in (
        "score-benchmark:retrieval-empty-npz",
        "score-benchmark:retrieval-truncated-npz",
        "score-benchmark:retrieval-npz-without-ids",
    ):
        bad = tmp / "emb.npz"
        data = (tiny / "emb.npz").read_bytes()
        if kind == "score-benchmark:retrieval-empty-npz":
            bad.write_bytes(b"")
        elif kind == "score-benchmark:retrieval-truncated-npz":
            bad.write_bytes(data[: len(data) // 2])
        else:
            np.savez(bad, image_emb=np.zeros((1, 2), np.float32))
        argv = ["score-benchmark", "--name", "retrieval", "--bench", str(tiny / "retrieval"), "--embeddings", str(bad)]
        return [*argv, "--out", out + ".parquet"], str(bad)
    if kind == "build-benchmark:retrieval-empty-images-npy":
        items = tmp / "items"
        items.mkdir()
        for f in (tiny / "items").iterdir():
            (items / f.name).write_bytes(f.read_bytes())
        (items / "images.npy").write_bytes(b"")
        argv = ["build-benchmark", "--name", "retrieval", "--items", str(items), "--world", "{}", "--config", "{}"]
        return [*argv, "--out", out], "images.npy"
    if kind.startswith("build-benchmark:mcic-pv-choice"):
        bad = tmp / "pv_choice.json"
        bad.write_text("not json" if kind.endswith("not-json") else '{"vector_size": 3, "epochs": 1}', encoding="utf-8")
        argv = ["build-benchmark", "--name", "mcic", "--items", str(tiny / "items"), "--world", json.dumps(TINY_WORLD)]
        named = str(bad) if kind.endswith("not-json") else "not a point of params mcic.pv_grid"
        return [*argv, "--config", "{}", "--input", f"pv_choice={bad}", "--out", out], named
    if kind == "build-benchmark:mcic-no-pv-choice":
        argv = ["build-benchmark", "--name", "mcic", "--items", str(tiny / "items"), "--world", json.dumps(TINY_WORLD)]
        return [*argv, "--config", "{}", "--out", out], "no OPTIMIZE-PV choice"
    if kind == "coco-items:not-a-zip":
        bad = tmp / "caption_datasets.zip"
        bad.write_bytes(b"not a zip")
        argv = ["coco-items", "--karpathy", str(bad), "--captions", str(bad), "--images", f"train2014={bad}"]
        return [*argv, "--out", out], "zip"
    if kind == "index:report-missing":
        return ["index", str(tiny / "report.html"), str(tmp / "gone.html"), "--out", out + ".html"], "gone.html"
    raise AssertionError(kind)


CORRUPT_CASES = [
    "table-benchmark:not-utf8",
    "table-benchmark:malformed-json",
    "table-benchmark:retrieval-empty-json",
    "metrics-benchmark:retrieval-not-parquet",
    "metrics-benchmark:retrieval-header-only",
    "metrics-benchmark:wrong-columns",
    "score-benchmark:retrieval-empty-npz",
    "score-benchmark:retrieval-truncated-npz",
    "score-benchmark:retrieval-npz-without-ids",
    "build-benchmark:retrieval-empty-images-npy",
    "build-benchmark:mcic-pv-choice-not-json",
    "build-benchmark:mcic-pv-choice-off-grid",
    "build-benchmark:mcic-no-pv-choice",
    "coco-items:not-a-zip",
    "index:report-missing",
]


@pytest.mark.parametrize("case", CORRUPT_CASES, ids=lambda c: c.replace(":", ":corrupt:", 1))
def test_a_corrupt_input_is_one_line_naming_it(case, tiny, tmp_path, capsys):
    argv, named = _corrupt(case, tiny, tmp_path)
    assert_input_error(capsys, main(argv), argv[0], named)
    assert not (tmp_path / "out").exists()


# -- internal errors -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("error", [TypeError, IndexError, AssertionError, AttributeError, NotImplementedError])
def test_an_internal_error_prints_its_traceback_and_says_it_is_a_bug(error, monkeypatch, tmp_path, capsys):
    def broken(args):
        raise error("something our code got wrong")

    monkeypatch.setattr(world_cli, "cmd_world", broken)
    argv = ["world", "--config", "{}", "--out", str(tmp_path / "the items")]
    assert main(argv) == EXIT_BUG
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and f"{error.__name__}: something our code got wrong" in err
    last = _lines(err)[-1]
    assert last.startswith("itmbench world: internal error") and "bug in itmbench" in last
    assert last.endswith(f"itmbench world --config '{{}}' --out '{tmp_path / 'the items'}'")


@pytest.mark.parametrize(
    "error,named",
    [
        (FileNotFoundError(2, "No such file or directory", "/data/x.parquet"), "/data/x.parquet: no such file"),
        (IsADirectoryError(21, "Is a directory", "/data/items"), "/data/items: is a folder"),
        (NotADirectoryError(20, "Not a directory", "/data/afile/x"), "/data/afile/x: a part of this path is a file"),
        (FileExistsError(17, "File exists", "/data/afile"), "/data/afile: exists and is not a folder"),
        (PermissionError(13, "Permission denied", "/root/x"), "/root/x: permission denied"),
        (OSError(28, "No space left on device", "/data/out"), "/data/out: No space left on device"),
        (FileNotFoundError("/data/y.parquet"), "/data/y.parquet: no such file"),
        (UnicodeDecodeError("utf-8", b"ab\xe4", 2, 3, "invalid continuation byte"), "not UTF-8"),
        (OverflowError("Python int too large to convert to C long"), "within int64"),
        (__import__("csv").Error("unexpected end of data"), "malformed CSV: unexpected end of data"),
        (EOFError("No data left in file"), "ended early (No data left in file)"),
        (json.JSONDecodeError("Expecting value", "{", 1), "not valid JSON"),
        (KeyError("unknown model 'x'"), "error: unknown model 'x'"),
        (InputError("f.csv: line 3: expected 4 fields"), "f.csv: line 3: expected 4 fields"),
        (ValueError("bad value"), "error: bad value"),
        (RuntimeError("`dvc pull` failed\nsecond line"), "`dvc pull` failed second line"),
        (__import__("zipfile").BadZipFile("File is not a zip file"), "corrupt archive"),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, BaseException) else "",
)
def test_each_input_error_class_is_one_line(error, named, monkeypatch, capsys):
    def failing(args):
        raise error

    monkeypatch.setattr(world_cli, "cmd_world", failing)
    assert_input_error(capsys, main(["world", "--config", "{}", "--out", "x"]), "world", named)


def test_a_library_valueerror_while_drawing_is_a_bug_not_bad_input(monkeypatch, tmp_path, capsys):
    """matplotlib refusing negative error bars (issue 34's figureE2) is our bug: exit 3 with the traceback."""

    def broken_draw(args):
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots()
        try:
            ax.errorbar([0, 1], [1.245, 1.3], yerr=[[-0.04, 0.01], [0.02, 0.02]])
        finally:
            plt.close(fig)

    monkeypatch.setattr(world_cli, "cmd_world", broken_draw)
    assert main(["world", "--config", "{}", "--out", str(tmp_path / "x")]) == EXIT_BUG
    err = capsys.readouterr().err
    assert "must not contain negative values" in err and "bug in itmbench" in _lines(err)[-1]


def test_a_readers_valueerror_is_still_bad_input(monkeypatch, tmp_path, capsys):
    bad = tmp_path / "bad.npy"
    bad.write_bytes(b"\x93NUMPY\x01\x00" + b"not a header")

    def reading_it(args):
        import numpy as np

        np.load(bad)

    monkeypatch.setattr(world_cli, "cmd_world", reading_it)
    assert main(["world", "--config", "{}", "--out", str(tmp_path / "x")]) == EXIT_INPUT
    capsys.readouterr()


def test_arrow_and_yaml_errors_are_input_errors(monkeypatch, capsys):
    import pyarrow
    import yaml

    for error in (pyarrow.ArrowInvalid("Parquet magic bytes not found"), yaml.YAMLError("mapping values")):

        def failing(args, error=error):
            raise error

        monkeypatch.setattr(world_cli, "cmd_world", failing)
        assert_input_error(capsys, main(["world", "--config", "{}", "--out", "x"]), "world", str(error))


# -- as a user runs it ---------------------------------------------------------------------------------------

_BUG = """
import sys
import itmbench.cli.world as w
def broken(args):
    return [][1]
w.cmd_world = broken
from itmbench.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _run(args: list[str]) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(args, capture_output=True, text=True, env=env, timeout=120, check=False)


@pytest.mark.parametrize(
    "case", ["folder-for-a-file", "confidence", "output-under-a-file", "bug"], ids=lambda c: f"subprocess:{c}"
)
def test_through_a_subprocess(case, tmp_path):
    python = [sys.executable, "-m", "itmbench.cli"]
    afile = tmp_path / "afile"
    afile.write_text("x", encoding="utf-8")
    if case == "folder-for-a-file":
        argv = ["table-benchmark", str(tmp_path), "--name", "bison", "--out-csv", str(tmp_path / "t.csv")]
        done = _run([*python, *argv, "--title", "t"])
        expected, named = EXIT_INPUT, f"itmbench table-benchmark: error: {tmp_path}: is a folder; expected a file"
    elif case == "confidence":
        done = _run([*python, "score-predictions", "ranked", "x", "--confidence", "1.5"])
        expected, named = EXIT_INPUT, "argument --confidence: expected a number in (0, 1), got 1.5"
    elif case == "output-under-a-file":
        done = _run([*python, "world", "--config", json.dumps(TINY_WORLD), "--out", str(afile / "items")])
        expected, named = EXIT_INPUT, f"itmbench world: error: {afile}"
    else:
        done = _run([sys.executable, "-c", _BUG, "world", "--config", "{}", "--out", str(tmp_path / "w")])
        assert done.returncode == EXIT_BUG, done.stderr
        assert "Traceback" in done.stderr and "IndexError: list index out of range" in done.stderr
        assert "bug in itmbench" in _lines(done.stderr)[-1]
        return
    assert done.returncode == expected, done.stderr
    assert "Traceback" not in done.stderr
    assert named in _lines(done.stderr)[-1], done.stderr


def test_the_docs_state_the_exit_codes():
    """docs/outputs.md lists the exit codes in a code block (numbers outside one would be typed by hand)."""
    text = (REPO / "docs" / "outputs.md").read_text(encoding="utf-8")
    assert f"exit {EXIT_INPUT}   the input or an option is wrong" in text
    assert f"exit {EXIT_BUG}   an internal error, a bug in itmbench" in text
