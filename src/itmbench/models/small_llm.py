"""The small LM of the COCO smoke test: a Llama-architecture causal LM that answers TROHN-Text's prompts.

The small COCO DAG stands OpenChat-3.5 in with an LM folder that transformers' text-generation pipeline loads by
path. With random weights it writes nothing that follows SugarCrepe's templates, so every stage after the LLM
ran on nothing (issue 36). `train_small_llm` trains one that answers them, on a world's train captions, in
minutes of one CPU core:

- **teacher answers** (`teacher_answer`): for each (caption, subtype) an answer in the template's own fields
  (`Nouns: [...]`, `Selected noun: ...`, `New noun: ...`, `New sentence: ...`; the swaps' `Yes`, the phrases,
  `Output: ...`), its edit drawn from the world's grammar (`negatives.captions.propose_edit`, the edit the
  world's SugarCrepe makes; add_obj adds an object beside a mention of any caption, as SugarCrepe's example
  does). An answer is taught only if the template filter (`check_template`, with the world's lexicon) keeps
  it; a caption with no such edit after `TEACHER_TRIES` draws gets the template's refusal (the swaps' `No`,
  the others' empty list), which the filter does not keep. No filter is loosened: the student is judged by
  the same `check_template` a real run's LLM is.
- **tokenizer**: a byte-level BPE trained on the prompts' fixed text and the teacher corpus, with OpenChat's
  turns as its chat template: the prompts are the real ones, token for token;
- **model**: Llama's architecture (rotary positions: the copy of the caption is a relative lookup) at
  `LLM_SIZE`;
- **training**, next-token loss on the answer tokens only, in three phases under one cosine schedule:
  (1) `repeat_steps` of a caption repeated after "Original sentence: ...\nNew sentence:" (short sequences:
  the copying heads form in a few hundred steps; without this phase, on the default world's captions, GPT-2
  after 1,500 steps and this model after 700 wrote world-like captions unrelated to the prompt's); (2)
  `copy_steps` of the teacher's answers to short prompts (the subtype's name and the query, no instruction);
  (3) `steps` of the real prompts. Every real prompt of a subtype shares its text up to the caption
  (instruction, worked example, chat turns), so each step of (3) encodes that prefix once, without gradient,
  and the batch's query + answer tokens attend to its cached keys and values at their true positions.
- **decoding**: the model's generation config samples at `TEMPERATURE` (a real run's `coco.llm.temperature:
  null` reads the model's own).

Same captions, seed and thread count, same weights.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from itmbench.negatives.captions import SUBSETS, locate_mentions, propose_edit
from itmbench.negatives.llm_captions import (
    TEMPLATES,
    check_template,
    prompt_messages,
    render_prompt,
    world_lexicon,
)
from itmbench.world.captions import RELATION_WORDS, CaptionStructure
from itmbench.world.scene import COLOURS, RELATIONS, SHAPES

TEACHER_TRIES = 8
# The student's size and budget: a few minutes on two CPU cores (docs/coco.md gives the measured figures).
LLM_SIZE = {"hidden_size": 96, "intermediate_size": 256, "num_hidden_layers": 3, "num_attention_heads": 4}
VOCAB_SIZE = 1200
REPEAT_STEPS, COPY_STEPS, STEPS, BATCH, LR, WARMUP = 250, 700, 400, 32, 3e-3, 30
# The student's own decoding default (its generation_config.json; `coco.llm.temperature: null` reads it): a
# distilled student is decoded near its mode.
TEMPERATURE = 0.2

# OpenChat-style turns (the chat path of `render_prompt`), in Jinja as transformers applies it.
CHAT_TEMPLATE = (
    "{% for m in messages %}{{ 'GPT4 Correct ' + ('User' if m['role'] == 'user' else 'Assistant') + ': ' "
    "+ m['content'] + '<eos>' }}{% endfor %}{% if add_generation_prompt %}GPT4 Correct Assistant:{% endif %}"
)


def bpe_chat_tokenizer(texts: Sequence[str], vocab_size: int):
    """A byte-level BPE of `vocab_size` tokens trained on `texts`, with OpenChat's turns as its chat template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=["<eos>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator(texts, trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="<eos>", pad_token="<eos>")
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def _llm_tokenizer():
    """The random-weight LM's tokenizer: 400 tokens trained on the TROHN-Text templates."""
    return bpe_chat_tokenizer([t.instruction + "\n" + t.example_answer for _, t in sorted(TEMPLATES.items())], 400)


def llm_config(tokenizer, positions: int = 2048):
    """The small LM's architecture (Llama's: rotary positions, RMSNorm, SwiGLU) for `tokenizer`."""
    from transformers import LlamaConfig

    return LlamaConfig(
        vocab_size=len(tokenizer),
        max_position_embeddings=positions,  # the templates' prompts are ~1000 tokens of the 400-token vocabulary
        tie_word_embeddings=True,
        bos_token_id=tokenizer.eos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.eos_token_id,
        **LLM_SIZE,
    )


def make_llm(out: Path, seed: int) -> None:
    """A random-weight Llama-architecture LM (`llm_config`) and its tokenizer, as `save_pretrained` writes them."""
    from transformers import LlamaForCausalLM

    tokenizer = _llm_tokenizer()
    torch.manual_seed(seed)
    model = LlamaForCausalLM(llm_config(tokenizer))
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)


def _listing(items: Sequence[str]) -> str:
    """A Python-style list of strings, as the templates' example answers write them."""
    return "[" + ", ".join(f"'{x}'" for x in items) + "]"


def _mention_nouns(structure: CaptionStructure) -> list[str]:
    return [m.shape for m in structure.mentions if m.shape is not None]


def _adjectives(structure: CaptionStructure) -> list[str]:
    return [a for m in structure.mentions for a in (m.size, m.colour) if a is not None]


def _changed(old: CaptionStructure, new: CaptionStructure) -> list[tuple[int, str, Any, Any]]:
    """(mention, field, old value, new value) of every mention field the edit changed."""
    return [
        (i, f, getattr(a, f), getattr(b, f))
        for i, (a, b) in enumerate(zip(old.mentions, new.mentions))
        for f in ("shape", "colour", "size")
        if getattr(a, f) != getattr(b, f)
    ]


def _relation_phrases(text: str) -> list[str]:
    """The longest relation phrase of the world's grammar in `text` (a one-item list), or none."""
    found = [p for r in RELATIONS for p in RELATION_WORDS[r] if f" {p} " in f" {text} "]
    return sorted(found, key=len, reverse=True)[:1]


def _fields(subset: str, listed: Sequence[str], selected: str, new: str, sentence: str) -> str:
    """An answer in the fields the subtype's template declares (list, selected, new, then the new sentence)."""
    t = TEMPLATES[subset]
    values = (_listing(listed), selected, new, sentence)
    return "\n".join(f"{name}: {value}" for name, value in zip((*t.fields, t.answer_field), values))


def _answer_of_edit(text: str, structure: CaptionStructure, subset: str, rng: np.random.Generator) -> str | None:
    """One proposed answer of `subset`, or None when the world's grammar has no such edit of the caption."""
    if subset == "add_obj":  # SugarCrepe's add_obj puts a new object beside any object of the caption
        if not structure.mentions:
            return None
        spans = locate_mentions(text, structure)
        i = int(rng.integers(len(spans)))
        shape, colour = SHAPES[int(rng.integers(len(SHAPES)))], COLOURS[int(rng.integers(len(COLOURS)))]
        end = spans[i][1]
        objects = [m.shape or spans[k][2] for k, m in enumerate(structure.mentions)]
        return _fields(
            subset, objects, objects[i], f"{colour} {shape}", f"{text[:end]} and a {colour} {shape}{text[end:]}"
        )
    edit = propose_edit(structure, text, subset, rng)
    if edit is None:
        return None
    changed = _changed(structure, edit.structure)
    if subset == "replace_obj":
        ((_, _, old, new),) = changed
        return _fields(subset, _mention_nouns(structure), old, new, edit.text)
    if subset == "replace_att":
        ((_, _, old, new),) = changed
        return _fields(subset, _adjectives(structure), old, new, edit.text)
    if subset == "replace_rel":
        old_phrases, new_phrases = _relation_phrases(text), _relation_phrases(edit.text)
        if not old_phrases or not new_phrases:
            return None
        return _fields(subset, old_phrases, old_phrases[0], new_phrases[0], edit.text)
    if subset in ("swap_obj", "swap_att"):
        values = sorted({str(v) for _, _, v, _ in changed}, key=lambda v: text.find(v))
        t = TEMPLATES[subset]
        return "\n".join(("Yes", f"{t.fields[0]}: {', '.join(values)}", f"{t.answer_field}: {edit.text}"))
    if subset == "add_att":
        ((i, _, _, new),) = changed
        objects = [m.shape or "object" for m in structure.mentions]
        return _fields(subset, objects, objects[i], new, edit.text)
    raise ValueError(f"unknown SugarCrepe subset {subset!r}; expected one of {SUBSETS}")


def refusal(subset: str) -> str:
    """The template's answer when no edit applies: the swaps' No, the others' empty list."""
    t = TEMPLATES[subset]
    return "No" if t.yes_no else f"{t.fields[0]}: []"


def teacher_answer(
    text: str, structure: CaptionStructure, subset: str, rng: np.random.Generator, lexicon: Mapping[str, str]
) -> tuple[str, bool]:
    """(answer, kept): the first of TEACHER_TRIES proposed answers the template filter keeps, else the refusal."""
    for _ in range(TEACHER_TRIES):
        answer = _answer_of_edit(text, structure, subset, rng)
        if answer is None:
            break
        if check_template(text, answer, subset, lexicon).ok:
            return answer, True
    return refusal(subset), False


def teacher_corpus(
    texts: Sequence[str], structures: Sequence[CaptionStructure], seed: int, subsets: Sequence[str] = SUBSETS
) -> list[tuple[str, str, str, bool]]:
    """(caption, subset, answer, kept) for every caption and subset, drawn from one seeded generator."""
    rng = np.random.default_rng(seed)
    lexicon = world_lexicon()
    return [
        (text, subset, *teacher_answer(text, structure, subset, rng, lexicon))
        for text, structure in zip(texts, structures)
        for subset in subsets
    ]


def train_tokenizer(corpus: Sequence[tuple[str, str, str, bool]], vocab_size: int = VOCAB_SIZE):
    """The trained LM's tokenizer: a BPE on the prompts' fixed text and the teacher corpus."""
    fixed = [t.instruction + "\n" + t.example_answer + "\n" + t.query for _, t in sorted(TEMPLATES.items())]
    fixed.append("GPT4 Correct User: GPT4 Correct Assistant:")
    return bpe_chat_tokenizer(fixed * 50 + [f"{c}\n{a}" for c, _, a, _ in corpus], vocab_size)


def _examples(tokenizer, corpus, subsets) -> dict[str, tuple[list[int], list[tuple[list[int], int]]]]:
    """Per subset: the shared prefix's token ids, and each example's (suffix ids, number of query tokens)."""
    eos = tokenizer.eos_token
    out: dict[str, tuple[list[int], list[tuple[list[int], int]]]] = {}
    for subset in subsets:
        rows = [(c, a) for c, s, a, _ in corpus if s == subset]
        prompts = [render_prompt(prompt_messages(c, subset), tokenizer) for c, _ in rows]
        prompt_ids = [tokenizer(p, add_special_tokens=False)["input_ids"] for p in prompts]
        full_ids = [
            tokenizer(p + " " + a + eos, add_special_tokens=False)["input_ids"] for p, (_, a) in zip(prompts, rows)
        ]
        common = min(len(p) for p in prompt_ids)
        for ids in prompt_ids:
            common = next((k for k in range(common) if ids[k] != prompt_ids[0][k]), common)
        for p, f in zip(prompt_ids, full_ids):
            if f[: len(p)] != p:
                raise RuntimeError(f"small LLM: a prompt's tokens change when its answer follows ({subset})")
        out[subset] = (prompt_ids[0][:common], [(f[common:], len(p) - common) for p, f in zip(prompt_ids, full_ids)])
    return out


def train_small_llm(
    texts: Sequence[str],
    structures: Sequence[CaptionStructure],
    seed: int = 0,
    steps: int = STEPS,
    batch_size: int = BATCH,
    copy_steps: int = COPY_STEPS,
    repeat_steps: int = REPEAT_STEPS,
    log=print,
):
    """(model, tokenizer, teacher corpus): the LM trained on the teacher's answers to the world's captions."""
    from transformers import LlamaForCausalLM

    corpus = teacher_corpus(texts, structures, seed)
    tokenizer = train_tokenizer(corpus)
    subsets = list(SUBSETS)
    data = _examples(tokenizer, corpus, subsets)
    longest = max(len(p) + max(len(s) for s, _ in ex) for p, ex in data.values())
    torch.manual_seed(seed)
    config = llm_config(tokenizer, max(1024, 2 ** math.ceil(math.log2(longest + 64))))
    model = LlamaForCausalLM(config)
    total = repeat_steps + copy_steps + steps
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / WARMUP) * 0.5 * (1 + math.cos(math.pi * min(1.0, s / total)))
    )
    rng = np.random.default_rng(seed)
    start = time.time()
    model.train()
    for step in range(repeat_steps):  # the copy first: a caption repeated, short sequences (induction forms fast)
        rows = [texts[int(i)] for i in rng.choice(len(texts), size=2 * batch_size)]
        pairs = [
            (
                tokenizer(f"Original sentence: {t}\nNew sentence:", add_special_tokens=False)["input_ids"],
                tokenizer(f" {t}{tokenizer.eos_token}", add_special_tokens=False)["input_ids"],
            )
            for t in rows
        ]
        loss = _step(model, opt, sched, [(q + a, len(q)) for q, a in pairs], tokenizer.eos_token_id)
        if step % 50 == 0 or step == repeat_steps - 1:
            log(f"small LLM copy step {step}: loss {loss:.3f} ({time.time() - start:.0f} s)")
    for step in range(copy_steps):  # first the answers to short prompts: the caption, the subtype, no instruction
        rows = [corpus[int(i)] for i in rng.choice(len(corpus), size=2 * batch_size)]
        loss = _step(
            model, opt, sched, [_short_example(tokenizer, c, s, a) for c, s, a, _ in rows], tokenizer.eos_token_id
        )
        if step % 50 == 0 or step == copy_steps - 1:
            log(f"small LLM short step {step}: loss {loss:.3f} ({time.time() - start:.0f} s)")
    for step in range(steps):
        subset = subsets[step % len(subsets)]
        prefix, examples = data[subset]
        batch = [
            examples[int(i)] for i in rng.choice(len(examples), size=min(batch_size, len(examples)), replace=False)
        ]
        loss = _step(model, opt, sched, batch, tokenizer.eos_token_id, prefix)
        if step % 50 == 0 or step == steps - 1:
            log(f"small LLM step {step}: loss {loss:.3f} ({time.time() - start:.0f} s)")
    model.eval()
    model.generation_config.do_sample = True
    model.generation_config.temperature = TEMPERATURE
    return model, tokenizer, corpus


def _short_example(tokenizer, caption: str, subset: str, answer: str) -> tuple[list[int], int]:
    """(ids, prompt length) of a short prompt: the subtype's name and the caption's query, then the answer."""
    query = TEMPLATES[subset].query.format(caption=caption)
    prompt = render_prompt([{"role": "user", "content": f"Task: {subset}\n{query}"}], tokenizer)
    q = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    return q + tokenizer(f" {answer}{tokenizer.eos_token}", add_special_tokens=False)["input_ids"], len(q)


def _step(
    model, opt, sched, batch: Sequence[tuple[list[int], int]], pad: int, prefix: Sequence[int] | None = None
) -> float:
    """One optimiser step, loss on the answer tokens of each (ids, number of prompt tokens). With `prefix`, the
    ids follow it: the prefix is encoded once, without gradient, into a cache the batch attends to."""
    from transformers import DynamicCache

    width = max(len(s) for s, _ in batch)
    ids = torch.full((len(batch), width), pad, dtype=torch.long)
    labels = torch.full((len(batch), width), -100, dtype=torch.long)
    for k, (seq, n_query) in enumerate(batch):
        ids[k, : len(seq)] = torch.tensor(seq)
        labels[k, n_query : len(seq)] = torch.tensor(seq[n_query:])
    if prefix is None:
        logits = model(ids).logits
    else:
        with torch.no_grad():
            cache = DynamicCache()
            model(torch.tensor([list(prefix)]), past_key_values=cache, use_cache=True)
        cache.batch_repeat_interleave(len(batch))
        positions = torch.arange(len(prefix), len(prefix) + width).expand(len(batch), -1)
        logits = model(ids, past_key_values=cache, position_ids=positions, use_cache=False).logits
    loss = F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), labels[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    sched.step()
    return float(loss.item())
