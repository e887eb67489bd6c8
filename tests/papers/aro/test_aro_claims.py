"""ARO's claims decide on the world's metrics, and can fail."""

from __future__ import annotations

import json

from itmbench.papers.aro import claims as aro_claims
from itmbench.papers.claims import ClaimConfig, Results, claim, explain


def _doc(relation: tuple[float, float, float], order: tuple[float, float, float]) -> dict:
    entry = lambda v: {"value": v[0], "lo": v[1], "hi": v[2], "n": 100}  # noqa: E731
    return {"confidence": 0.95, "metrics": {"vg_relation": entry(relation), "coco_order": entry(order)}}


def _results(docs: dict, kinds: dict) -> Results:
    return Results("world", {"aro": docs}, kinds)


KINDS = {"clip": "contrastive", "vse": "contrastive", "random": "random"}


def test_relation_claim_holds_when_half_the_models_reach_chance_and_fails_otherwise():
    near = {"clip": _doc((55.0, 49.0, 61.0), (30, 25, 35)), "vse": _doc((70.0, 65.0, 75.0), (30, 25, 35))}
    v = aro_claims.relation_not_above_chance(_results(near, KINDS), ClaimConfig())
    assert v.holds is True and v.evidence["models"]["clip"]["fails"] and not v.evidence["models"]["vse"]["fails"]
    above = {"clip": _doc((60.0, 51.0, 69.0), (30, 25, 35)), "vse": _doc((70.0, 65.0, 75.0), (30, 25, 35))}
    assert aro_claims.relation_not_above_chance(_results(above, KINDS), ClaimConfig()).holds is False
    # the random model is no image-text model: its chance-level numbers decide nothing
    only_random = {"random": _doc((50.0, 40.0, 60.0), (20, 15, 25))}
    assert aro_claims.relation_not_above_chance(_results(only_random, KINDS), ClaimConfig()).holds is None


def test_order_claim_reads_the_upper_bound():
    low = {"clip": _doc((55.0, 49.0, 61.0), (30.0, 25.0, 45.0)), "vse": _doc((55.0, 49.0, 61.0), (40.0, 35.0, 49.9))}
    assert aro_claims.order_insensitive(_results(low, KINDS), ClaimConfig()).holds is True
    high = {"clip": _doc((55.0, 49.0, 61.0), (45.0, 40.0, 51.0)), "vse": _doc((55.0, 49.0, 61.0), (90, 85, 95))}
    assert aro_claims.order_insensitive(_results(high, KINDS), ClaimConfig()).holds is False


def test_negclip_without_its_models_is_undecided_and_every_claim_explains_itself():
    docs = {"clip": _doc((55.0, 49.0, 61.0), (30.0, 25.0, 45.0))}
    res = _results(docs, KINDS)
    for c in aro_claims.CLAIMS:
        v = claim("aro", c.id).check(res, ClaimConfig())
        assert (v.holds is None) == (c.id in ("negclip_improves", "attribution_not_above_chance")), c.id
        shown = explain("aro", c.id, v.holds, json.dumps(v.evidence), v.reason)
        assert shown.sentence


def _sets(values: dict[str, tuple[float, float, float]]) -> dict:
    entry = lambda v: {"value": v[0], "lo": v[1], "hi": v[2], "n": 1000}  # noqa: E731
    return {"confidence": 0.95, "metrics": {m: entry(v) for m, v in values.items()}}


SETS = ("vg_relation", "vg_attribution", "coco_order", "flickr30k_order")
NEGCLIP_KINDS = {"negclip": "contrastive", "clip": "contrastive", "clip_ft": "contrastive"}


def test_negclip_claim_holds_only_when_negclip_is_above_both_bases_on_every_set():
    base = _sets(dict.fromkeys(SETS, (50.0, 47.0, 53.0)))
    better = _sets(dict.fromkeys(SETS, (60.0, 57.0, 63.0)))
    docs = {"negclip": better, "clip": base, "clip_ft": base}
    v = aro_claims.negclip_improves(_results(docs, NEGCLIP_KINDS), ClaimConfig())
    assert v.holds is True and all(s["above"] for s in v.evidence["sets"].values())
    shown = explain("aro", "negclip_improves", v.holds, json.dumps(v.evidence), v.reason)
    assert shown.sentence.startswith("NegCLIP's interval above clip and clip_ft's on 4 of 4 ARO sets"), shown
    # overlapping intervals on one set (the Flickr30k-Order interval reaches clip_ft's): not shown there
    close = _sets({**dict.fromkeys(SETS, (60.0, 57.0, 63.0)), "flickr30k_order": (55.0, 52.5, 57.5)})
    v = aro_claims.negclip_improves(_results({**docs, "negclip": close}, NEGCLIP_KINDS), ClaimConfig())
    assert v.holds is False and not v.evidence["sets"]["flickr30k_order"]["above"]
    # without NegCLIP (or a base) the world cannot decide
    v = aro_claims.negclip_improves(_results({"clip": base, "clip_ft": base}, NEGCLIP_KINDS), ClaimConfig())
    assert v.holds is None and "negclip" in v.reason
