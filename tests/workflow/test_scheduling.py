"""The default DAG's scheduling: trainings carry a priority, and the model others build on comes first."""

from __future__ import annotations


def test_trainings_come_before_short_jobs_and_clip_first(tiny_world_plan: list[dict]) -> None:
    # (rule, wildcards) -> priority of every job the session's dry run plans that prints one
    prio = {(j["rule"], j["wildcards"]): j["priority"] for j in tiny_world_plan if j["priority"] is not None}
    trainings = ("train", "train_cross_scorer")  # the captioner (coca) trains without writing item embeddings
    train = {w.removeprefix("trained="): p for (rule, w), p in prio.items() if rule in trainings}
    # clip: ten models start from it (init: clip_coco, clip_trohn_text, clip_trohn_img and its filtered
    # ablation, ARO's negclip and clip_ft, vse, de_i2t, its small-batch ablation and de_t2t_i2t), the FFNN, the
    # Vec2seq + FFNN and MCIC's three linear baselines read its embeddings (upstream), and it is the cross scorers'
    # shortlist model: 1 + 16
    assert train["clip"] == 17
    assert train["clip_rn"] == 2  # de_i2t_resnet starts from it
    fine_tunes = ("clip_coco", "clip_trohn_text", "clip_trohn_img", "clip_trohn_img_filtered", "de_i2t_small_batch")
    fine_tunes += ("negclip", "clip_ft")
    others = ("vse", "de_i2t", "de_i2t_scratch", "de_i2t_resnet", "de_t2t_i2t", "coca")
    assert {train[m] for m in (*fine_tunes, *others)} == {1}
    assert len(train) == 17 and max(train, key=train.get) == "clip"
    assert {rule for rule, _ in prio} == set(trainings)  # every other job keeps Snakemake's default (0, not printed)
