"""The small LM of the COCO smoke test (`models.small_llm`): its teacher's answers, its tokenizer, its training.

The teacher answers each (caption, subtype) in the template's own fields with an edit of the world's grammar,
and only answers the real filter (`check_template`) keeps are taught; the student is judged by the same
filter in the complete small COCO DAG (tests/workflow/test_coco_small_dag.py).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from unit_world import unit_world

from itmbench.models.small_llm import (
    TEMPLATES,
    refusal,
    teacher_answer,
    teacher_corpus,
    train_small_llm,
    train_tokenizer,
)
from itmbench.negatives.captions import SUBSETS
from itmbench.negatives.llm_captions import (
    LLMConfig,
    check_template,
    generate_negatives,
    parse_response,
    prompt_messages,
    render_prompt,
    world_lexicon,
)
from itmbench.params import make_config
from itmbench.world.captions import CaptionStructure, Mention
from itmbench.world.generate import generate_world

WORLD = generate_world(unit_world(n_train=60, n_val=10, n_test=10))
TRAIN = WORLD.caption_table[WORLD.caption_table["split"] == "train"]
STRUCTURES = [CaptionStructure.from_json(s) for s in TRAIN["structure"]]


def test_a_worked_answer_of_each_kind() -> None:
    text = "a red circle above a blue square"
    structure = CaptionStructure(
        (Mention(shape="circle", colour="red"), Mention(shape="square", colour="blue")),
        relation="above",
        kind="relation",
    )
    rng = np.random.default_rng(0)
    lexicon = world_lexicon()
    answer, kept = teacher_answer(text, structure, "replace_obj", rng, lexicon)
    fields = parse_response(answer, "replace_obj")
    assert kept and fields["Nouns"] == "['circle', 'square']"
    old, new = fields["Selected noun"], fields["New noun"]
    assert fields["New sentence"] == text.replace(old, new) and new != old
    answer, kept = teacher_answer(text, structure, "swap_att", rng, lexicon)
    assert kept and answer.splitlines() == [
        "Yes",
        "Swappable attributes: red, blue",
        "Output: a blue circle above a red square",
    ]
    answer, kept = teacher_answer(text, structure, "add_obj", rng, lexicon)
    fields = parse_response(answer, "add_obj")
    added = f" and a {fields['New object']}"
    assert kept and fields["New sentence"] in (f"a red circle{added} above a blue square", text + added), answer
    # a one-object caption has nothing to swap: the template's No, which the filter does not keep
    single = CaptionStructure((Mention(shape="circle", colour="red"),), kind="single")
    assert teacher_answer("a red circle", single, "swap_obj", rng, lexicon) == ("No", False)
    assert refusal("replace_rel") == "Relationships: []"


def test_every_taught_answer_is_one_the_filter_keeps_and_every_refusal_one_it_does_not() -> None:
    corpus = teacher_corpus(TRAIN["text"].tolist(), STRUCTURES, seed=0)
    assert len(corpus) == len(TRAIN) * len(SUBSETS)
    lexicon = world_lexicon()
    for caption, subset, answer, kept in corpus:
        check = check_template(caption, answer, subset, lexicon)
        assert check.ok == kept, (caption, subset, answer)
        if not kept:
            assert answer == refusal(subset)
    by_subset = {s: sum(k for _, t, _, k in corpus if t == s) for s in SUBSETS}
    assert all(by_subset[s] > 0 for s in ("replace_obj", "replace_att", "replace_rel", "add_obj")), by_subset
    assert teacher_corpus(TRAIN["text"].tolist(), STRUCTURES, seed=0) == corpus  # seeded


def test_the_tokenizer_reads_the_real_prompts_and_the_chat_template() -> None:
    corpus = teacher_corpus(TRAIN["text"].tolist()[:20], STRUCTURES[:20], seed=0)
    tokenizer = train_tokenizer(corpus, vocab_size=600)
    for subset in TEMPLATES:
        prompt = render_prompt(prompt_messages(TRAIN["text"].iloc[0], subset), tokenizer)
        assert prompt.startswith("GPT4 Correct User: ") and prompt.endswith("GPT4 Correct Assistant:")
        ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
        assert tokenizer.decode(ids) == prompt


@pytest.mark.slow
def test_a_short_training_writes_a_model_the_text_generation_pipeline_runs(tmp_path) -> None:
    from transformers import pipeline

    torch.set_num_threads(1)
    model, tokenizer, _ = train_small_llm(
        TRAIN["text"].tolist(),
        STRUCTURES,
        seed=0,
        steps=4,
        batch_size=4,
        copy_steps=4,
        repeat_steps=4,
        log=lambda m: None,
    )
    model.save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    pipe = pipeline("text-generation", model=str(tmp_path), dtype=torch.float32, device="cpu")
    assert type(pipe.model).__name__ == "LlamaForCausalLM"
    cfg = make_config(LLMConfig, model=str(tmp_path), dtype="float32", max_new_tokens=8, batch_size=2)
    negatives = generate_negatives(pipe, TRAIN["text"].tolist()[:2], cfg)
    assert len(negatives) == 2 * len(SUBSETS)
