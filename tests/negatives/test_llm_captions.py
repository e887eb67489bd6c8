"""TROHN-Text negatives: SugarCrepe's prompts, the template-following filter, a tiny random GPT-2 end to end."""

from __future__ import annotations

import pytest
import torch

from itmbench.negatives.llm_captions import (
    NEGATIVE_COLUMNS,
    TEMPLATES,
    LLMConfig,
    check_template,
    filter_summary,
    generate_negatives,
    parse_response,
    prompt_messages,
    render_prompt,
    world_lexicon,
)
from itmbench.papers.sugarcrepe.released import SUBSETS
from itmbench.params import make_config

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_one_template_per_subtype_with_its_example() -> None:
    assert set(TEMPLATES) == set(SUBSETS)
    for subset, t in TEMPLATES.items():
        messages = prompt_messages("A dog on a sofa.\n", subset)
        assert [m["role"] for m in messages] == ["user", "assistant", "user"]
        assert messages[-1]["content"].startswith(("Original sentence: A dog on a sofa.", "Input: A dog on a sofa."))
        assert f"{t.answer_field}:" in t.instruction and f"{t.answer_field}:" in t.example_answer
        assert check_template(_example_input(t.instruction), t.example_answer, subset).ok, subset  # its own example
    assert "swap noun phrases" in prompt_messages("x", "swap_obj")[-1]["content"]
    assert "swap attributes" in prompt_messages("x", "swap_att")[-1]["content"]
    with pytest.raises(ValueError, match="unknown SugarCrepe subset"):
        prompt_messages("x", "replace_verb")


def _example_input(instruction: str) -> str:
    """The example sentence the template's assistant turn answers (the instruction's last input)."""
    lines = [ln for ln in instruction.splitlines() if ln.startswith(("Original sentence: ", "Input: "))]
    return lines[-1].split(": ", 1)[1]


def test_render_prompt_plain_and_chat() -> None:
    class Plain:
        chat_template = None

    text = render_prompt(prompt_messages("A cat.", "add_att"), Plain())
    assert text.startswith("User: Given an input sentence") and text.endswith("Original sentence: A cat.\n\nAssistant:")
    assert text.count("Assistant:") == 2

    class Chat:
        chat_template = "x"

        def apply_chat_template(self, messages, tokenize, add_generation_prompt):
            assert not tokenize and add_generation_prompt
            return "|".join(m["role"] for m in messages)

    assert render_prompt(prompt_messages("A cat.", "add_att"), Chat()) == "user|assistant|user"


PIZZA = "A man is in a kitchen making pizzas."
GIRL = "A girl in a pink shirt holding a blue umbrella."
BENCH = "A bench at the beach next to the sea"


@pytest.mark.parametrize(
    ("subset", "original", "response", "reason"),
    [
        ("replace_obj", PIZZA, "Nouns: ['man']\nSelected noun: kitchen\nNew noun: garden\n"
         "New sentence: A man is in a garden making pizzas.", "ok"),
        ("replace_obj", PIZZA, "I would pick the kitchen.", "no_template"),
        ("replace_obj", PIZZA, "Selected noun: kitchen\nNew noun: garden\n"
         "New sentence: A man is in a garden. He makes pizzas.", "not_one_sentence"),
        ("replace_obj", PIZZA, "Selected noun: kitchen\nNew noun: garden\n"
         "New sentence: Is a man in a garden making pizzas?", "question"),
        ("replace_obj", PIZZA, "Selected noun: man\nNew noun: man\nNew sentence: a man is in a kitchen, making pizzas",
         "unchanged"),
        ("replace_obj", PIZZA, "Selected noun: kitchen\nNew noun: garden\n"
         "New sentence: A tall man is in a garden making pizzas.", "wrong_edit"),  # two edits
        ("replace_obj", PIZZA, "Selected noun: man\nNew noun: woman\n"
         "New sentence: A man is in a garden making pizzas.", "wrong_edit"),  # not the declared word
        ("swap_att", GIRL, "Yes\nSwappable attributes: pink, blue\n"
         "Output: A girl in a blue shirt holding a pink umbrella.", "ok"),
        ("swap_att", GIRL, "No\nThe attributes cannot be swapped.", "declined"),
        ("swap_att", GIRL, "Yes\nSwappable attributes: pink, blue\n"
         "Output: A girl in a blue dress holding a pink umbrella.", "wrong_edit"),  # a word changed, not swapped
        ("swap_att", GIRL, "Swappable attributes: pink, blue\nOutput: A girl in a blue shirt holding a pink umbrella.",
         "no_template"),  # no Yes
        ("add_obj", BENCH, "Objects: ['bench']\nSelected object: bench\nNew object: umbrella\n"
         "New sentence: An umbrella and a bench at the beach next to the sea.", "ok"),
        ("add_att", "three people riding horses on a beach", "Selected object: three people\nNew attribute: elderly\n"
         "New sentence: Three elderly people riding on a beach.", "wrong_edit"),  # 'horses' dropped
        ("add_att", "three people riding horses on a beach", "Selected object: horses\nNew attribute: white\n"
         "New sentence: Three people riding white horses on a beach.\nExtra chatter on a second line.", "ok"),
    ],
)  # fmt: skip
def test_filter_on_hand_written_answers(subset: str, original: str, response: str, reason: str) -> None:
    check = check_template(original, response, subset)
    assert check.reason == reason
    assert check.ok == (reason == "ok") and (check.negative is not None) == check.ok
    if check.ok:
        assert "\n" not in check.negative


def test_filter_checks_the_kind_of_word_with_a_lexicon() -> None:
    lexicon = world_lexicon()
    original = "a red circle above a blue square"
    colour = "Selected adjective: red\nNew adjective: green\nNew sentence: a green circle above a blue square"
    shape = "Selected adjective: circle\nNew adjective: triangle\nNew sentence: a red triangle above a blue square"
    assert check_template(original, colour, "replace_att", lexicon).ok
    assert check_template(original, shape, "replace_att").ok  # without a lexicon the kind is not checked
    assert check_template(original, shape, "replace_att", lexicon).reason == "wrong_edit"
    relation = "Selected relationship: above\nNew relationship: below\nNew sentence: a red circle below a blue square"
    assert check_template(original, relation, "replace_rel", lexicon).ok
    swap = "Yes\nSwappable noun phrases: circle, square\nOutput: a red square above a blue circle"
    assert check_template(original, swap, "swap_obj", lexicon).ok
    nouns_as_attributes = "Yes\nSwappable attributes: circle, square\nOutput: a red square above a blue circle"
    assert check_template(original, nouns_as_attributes, "swap_att").ok
    assert check_template(original, nouns_as_attributes, "swap_att", lexicon).reason == "wrong_edit"
    assert parse_response(swap, "swap_obj") == {
        "answer": "Yes",
        "Swappable noun phrases": "circle, square",
        "Output": "a red square above a blue circle",
    }


class FakePipe:
    """A text-generation pipeline stand-in that answers every prompt from a fixed list (the call's contract)."""

    class Tokenizer:
        chat_template = None
        pad_token_id = None
        eos_token = "<eos>"
        padding_side = "right"

        @property
        def pad_token(self):
            return self.eos_token

        @pad_token.setter
        def pad_token(self, value):
            self.pad_token_id = 0

    def __init__(self, answers):
        self.tokenizer = self.Tokenizer()
        self.answers = answers
        self.calls = []

    def __call__(self, prompts, **options):
        self.calls.append(options)
        return [[{"generated_text": self.answers[k % len(self.answers)]}] for k in range(len(prompts))]


def test_generate_negatives_rows_and_options() -> None:
    pipe = FakePipe(
        [
            "Selected noun: kitchen\nNew noun: garden\nNew sentence: A man is in a garden making pizzas.",
            "nonsense",
        ]
    )
    cfg = make_config(LLMConfig, subsets=("replace_obj",), batch_size=2, max_new_tokens=7)
    df = generate_negatives(pipe, [PIZZA, PIZZA, PIZZA], cfg, caption_ids=[10, 11, 12])
    assert list(df.columns) == list(NEGATIVE_COLUMNS) and len(df) == 3
    assert df["caption_id"].tolist() == [10, 11, 12]
    assert df["reason"].tolist() == ["ok", "no_template", "ok"]  # batches of 2: answers restart per batch
    assert df["negative_caption"].iloc[0] == "A man is in a garden making pizzas."
    assert df["negative_caption"].isna().tolist() == [False, True, False] and (df["type"] == "replace").all()
    assert pipe.calls[0]["return_full_text"] is False and pipe.calls[0]["max_new_tokens"] == 7
    assert pipe.tokenizer.padding_side == "left" and pipe.tokenizer.pad_token_id == 0
    summary = filter_summary(df)
    assert summary.loc[0, "ok"] == 2 and summary.loc[0, "kept_percent"] == pytest.approx(200 / 3)
    with pytest.raises(ValueError, match="caption ids"):
        generate_negatives(pipe, [PIZZA], cfg, caption_ids=[1, 2])


def test_tiny_random_gpt2_end_to_end() -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast, pipeline

    corpus = [t.instruction + "\n" + t.example_answer for t in TEMPLATES.values()]
    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=["<eos>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator(corpus, trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="<eos>")
    torch.manual_seed(0)
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=1024,
        n_embd=32,
        n_layer=2,
        n_head=2,
        bos_token_id=tokenizer.eos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    pipe = pipeline("text-generation", model=GPT2LMHeadModel(config), tokenizer=tokenizer, device="cpu")
    cfg = make_config(LLMConfig, subsets=("replace_att", "swap_obj"), batch_size=2, max_new_tokens=12)
    captions = ["A dog on a sofa.", "Two cats near a red door"]
    first = generate_negatives(pipe, captions, cfg)
    again = generate_negatives(pipe, captions, cfg)
    assert len(first) == 4 and first.equals(again)  # seeded sampling
    assert first["response"].str.len().gt(0).all()
    # random weights do not follow the template: the filter drops every generation
    assert not first["follows_template"].any() and first["negative_caption"].isna().all()
