"""The default DAG's scheduling: trainings carry a priority, and the model others build on comes first."""

from __future__ import annotations


def test_trainings_come_before_short_jobs_and_clip_first(tiny_world_plan: list[dict]) -> None:
    # (rule, wildcards) -> priority of every job the session's dry run plans that prints one
    prio = {(j["rule"], j["wildcards"]): j["priority"] for j in tiny_world_plan if j["priority"] is not None}
    trainings = ("train", "train_cross_scorer")  # the captioner (coca) trains without writing item embeddings
    train = {w.removeprefix("trained="): p for (rule, w), p in prio.items() if rule in trainings}
    # clip: seven models start from it (init: clip_coco, clip_trohn_text, clip_trohn_img and its filtered
    # ablation, vse, de_i2t and its small-batch ablation), the FFNN, the Vec2seq + FFNN and MCIC's three linear
    # baselines read its embeddings (upstream), and it is the cross scorers' shortlist model: 1 + 13
    assert train["clip"] == 14
    fine_tunes = ("clip_coco", "clip_trohn_text", "clip_trohn_img", "clip_trohn_img_filtered", "de_i2t_small_batch")
    assert {train[m] for m in (*fine_tunes, "vse", "de_i2t", "de_i2t_scratch", "de_i2t_resnet", "coca")} == {1}
    assert len(train) == 14 and max(train, key=train.get) == "clip"
    assert {rule for rule, _ in prio} == set(trainings)  # every other job keeps Snakemake's default (0, not printed)
