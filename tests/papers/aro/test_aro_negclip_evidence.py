"""The instruments that tell a limit of the world from a NegCLIP finding that does not replicate (docs/aro.md):
benchmarks/negclip_swaps.py's edits against the world's own parser, and benchmarks/relation_probe.py's hard
negatives and run on a small world."""

from __future__ import annotations

from pathlib import Path

import pytest
from benchmark_scripts import load_benchmark
from unit_world import unit_world

from itmbench.papers.aro import canonical as aro_canonical
from itmbench.papers.registry import benchmark
from itmbench.train.negatives import swap_kinds
from itmbench.world.captions import CaptionStructure
from itmbench.world.generate import generate_world, write_world
from itmbench.world.parse import parse_caption

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def swaps():
    return load_benchmark("negclip_swaps")


@pytest.fixture(scope="module")
def probe(swaps):
    return load_benchmark("relation_probe")


def test_swap_edits_worked_example(swaps):
    text = "a large red circle is above a small blue square"
    edits = {s: swaps.swap_edit(text, s)[0] for s in swap_kinds(text)}
    assert edits == {
        "a small blue square is above a large red circle": swaps.MENTIONS,
        "a large red square is above a small blue circle": swaps.OTHER_ACROSS,
        "a red large circle is above a small blue square": swaps.GRAMMAR,
        "a small red circle is above a large blue square": swaps.OTHER_ACROSS,
        "a blue red circle is above a small large square": swaps.GRAMMAR,
        "a large small circle is above a red blue square": swaps.GRAMMAR,
        "a large blue circle is above a small red square": swaps.COLOURS_ACROSS,
        "a large red circle is above a blue small square": swaps.GRAMMAR,
    }
    # 'a picture' is a noun phrase to NegCLIP's swaps (as to spaCy's), never a mention: moving it is grammar
    framed = "a picture of a red circle left of a blue square"
    assert swaps.mention_swap(framed) == "a picture of a blue square left of a red circle"
    assert swaps.swap_edit(framed, "a red circle of a picture left of a blue square") == (swaps.GRAMMAR, None)


def test_swap_edits_agree_with_the_parser_on_every_world_caption(swaps):
    world = generate_world(unit_world(n_train=120, n_val=4, n_test=4))
    seen = set()
    for text in world.caption_table["text"]:
        before = parse_caption(text).structure
        for swapped in swap_kinds(text):
            edit, claimed = swaps.swap_edit(text, swapped)
            after = parse_caption(swapped).structure
            assert claimed == after
            seen.add(edit)
            assert (after is None) == (edit == swaps.GRAMMAR), (text, swapped, edit)
            if edit == swaps.MENTIONS:  # the parsed mentions, exchanged
                assert after == CaptionStructure(before.mentions[::-1], relation=before.relation, kind=before.kind)
            if edit == swaps.COLOURS_ACROSS:  # the parsed colours, exchanged; the rest as it was
                (m0, m1), (n0, n1) = before.mentions, after.mentions
                assert (n0.colour, n1.colour) == (m1.colour, m0.colour) != (m0.colour, m1.colour)
                assert (n0.shape, n0.size, n1.shape, n1.size) == (m0.shape, m0.size, m1.shape, m1.size)
    assert seen == set(swaps.EDITS)


def test_the_probe_negative_is_the_mention_swap_of_relation_captions_only(probe):
    assert probe.relation_swap("a red circle is above a blue square") == ["a blue square is above a red circle"]
    assert probe.relation_swap("a picture of a circle to the left of a red shape") == [
        "a picture of a red shape to the left of a circle"
    ]
    assert probe.relation_swap("a red circle and a blue square") == []  # a pair's swap is still true
    assert probe.relation_swap("there is a small red circle") == []
    assert probe.relation_swap("two red circles") == []


@pytest.mark.slow  # a training run
def test_relation_probe_trains_and_scores_on_a_small_world(tmp_path, probe, capsys):
    cfg = unit_world(n_train=40, n_val=20, n_test=30)
    world = generate_world(cfg)
    write_world(world, tmp_path / "items")
    aro_canonical.write(benchmark("aro").build(world, {}, cfg, {}), tmp_path / "aro")
    argv = ["--items", str(tmp_path / "items"), "--aro", str(tmp_path / "aro"), "--out", str(tmp_path / "probe")]
    assert probe.main([*argv, "--params", str(REPO / "params.yaml"), "--epochs", "1"]) == 0
    assert (tmp_path / "probe" / "model.pt").stat().st_size > 0
    rows = [line.split(" | ") for line in capsys.readouterr().out.splitlines()[2:]]
    assert [(r[0].lstrip("| "), r[1]) for r in rows] == [
        (model, name)
        for model in ("start", probe.PROBE)
        for name in ("VG-Relation", "VG-Attribution", "test relation captions, mention swaps")
    ]
    assert all(int(r[2]) > 0 and 0 <= float(r[3]) <= 100 for r in rows)
