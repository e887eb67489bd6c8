"""TROHN-Text hard-negative captions from an LLM (transformers text-generation) with SugarCrepe's per-subtype prompts.

BiVLC section 5.1 / appendix F: every COCO train caption gets one negative per SugarCrepe subtype
from OpenChat-3.5-0106 prompted with SugarCrepe's templates (instruction, one worked example, then
the caption), and a heuristic drops the generations that do not follow the template. The prompts
below are those of the released generation script (IMirandaM/BiVLC,
src/Training_data/TROHN_Text/TROHN_Text_generation.py), SugarCrepe's templates in chat form: a user
turn with the instruction and a first example, an assistant turn answering the example's second
sentence, and a user turn with the caption. Its settings are the defaults of `LLMConfig`: sampling,
at most 350 new tokens, batches of 200 prompts.

Decisions where the script is silent or differs:
- whitespace: the script's templates carry its source indentation inside the strings; here they
  are dedented (the words are the same);
- the swap_obj query asks to swap "noun phrases" (its own example's wording); the script asks to
  swap "attributes" for both swap subtypes;
- parsing reads only the generated continuation (`return_full_text=False`), which is what the
  script's count of 'New sentence: ' / 'Output: ' occurrences in prompt + generation amounts to;
- the template-following filter (`check_template`) keeps a generation only if (in order; the first
  failure is its `reason`): it has the answer field (swap: answers Yes and has 'Output:'); the
  answer's first line is one sentence and not a question (TROHN-Img also dropped questions); it
  differs from the caption (case, punctuation and spacing ignored); and the word-level edit is of
  the subtype's kind: replace = one contiguous span of words replaced, containing the declared old
  word, the declared new word in its place; swap = the same words in another order, the two
  declared phrases present in both; add = the caption's words (articles aside) kept in order with
  words inserted, among them the declared new word. With a `lexicon` (word -> 'noun', 'adjective'
  or 'relation', e.g. `world_lexicon()`), the edited words must also include one of the subtype's
  kind (replace_obj / swap_obj / add_obj: noun, *_att: adjective, replace_rel: relation);
- seeding: sampling draws from torch's generator seeded per batch of prompts from (seed, subtype,
  the batch's captions), so the same captions in the same batches give the same negatives.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pandas as pd
import torch

from itmbench.negatives.captions import SUBSETS, split_subset
from itmbench.params import make_config

ARTICLES = frozenset({"a", "an", "the"})
REASONS = ("ok", "no_template", "declined", "not_one_sentence", "question", "unchanged", "wrong_edit")
# The kind of word each subtype edits (checked against a lexicon when one is given).
EDIT_KIND = {
    "replace_obj": "noun",
    "replace_att": "adjective",
    "replace_rel": "relation",
    "swap_obj": "noun",
    "swap_att": "adjective",
    "add_obj": "noun",
    "add_att": "adjective",
}
NEGATIVE_COLUMNS = (
    "caption_id",
    "caption",
    "subset",
    "type",
    "subtype",
    "response",
    "negative_caption",
    "follows_template",
    "reason",
)


def _lines(*lines: str) -> str:
    """Join prompt lines (the templates' text, one line per argument)."""
    return "\n".join(lines)


@dataclass(frozen=True)
class PromptTemplate:
    """One subtype's few-shot chat prompt: instruction (+ first example), example answer, caption query."""

    instruction: str
    example_answer: str
    query: str  # format string with {caption}
    answer_field: str  # the field holding the new sentence
    fields: tuple[str, ...]  # the other fields the answer declares, in order
    yes_no: bool = False  # the answer starts with Yes/No (swap subtypes)


_TASK_SUFFIX = (
    "The new sentence must meet the following three requirements:",
    "    1. The new sentence must be describing a scene that is as different as possible from the original scene.",
    "    2. The new sentence must be fluent and grammatically correct.",
    "    3. The new sentence must make logical sense.",
)
_SWAP_SUFFIX = (
    "The new sentence must meet the following three requirements:",
    "    1. The new sentence must be describing a different scene from the input sentence.",
    "    2. The new sentence must be fluent and grammatically correct.",
    "    3. The new sentence must make logical sense.",
)
_ADD_SUFFIX = (
    "The new sentence must meet the following three requirements:",
    "    1. The new sentence must describe a clearly new and different scene.",
    "    2. The new sentence must be fluent and grammatically correct.",
    "    3. The new sentence must make logical sense.",
)
_SWAP_QUESTION = (
    "Is it possible to swap {what} in the input sentence to generate a new sentence that is different from the "
    "input sentence and makes logical sense?"
)


def _swap_steps(what: str) -> tuple[str, ...]:
    """The swap subtypes' three-step answer instructions."""
    return (
        "To complete the task, you should:",
        "    1. Answer the question of whether generating such a new sentence is possible using Yes or No.",
        f"    2. Output the swappable {what}.",
        "    3. Swap them to make a new sentence.",
    )


TEMPLATES: dict[str, PromptTemplate] = {
    "replace_obj": PromptTemplate(
        instruction=_lines(
            "Given an input sentence describing a scene, your task is to:",
            "    1. Locate the noun words in the sentence.",
            "    2. Randomly pick one noun word.",
            "    3. Replace the selected noun word with a new noun word to make a new sentence.",
            *_TASK_SUFFIX,
            "Here are some examples:",
            "Original sentence: A man is in a kitchen making pizzas.",
            'Nouns: ["man", "kitchen", "pizzas"]',
            "Selected noun: man",
            "New noun: woman",
            "New sentence: A woman is in a kitchen making pizzas.",
            "",
            "Original sentence: a woman seated on wall and birds besides her",
        ),
        example_answer=_lines(
            "Nouns: ['woman', 'wall', 'birds']",
            "Selected noun: wall",
            "New noun: bench",
            "New sentence: A woman seated on a bench and birds besides her.",
        ),
        query="Original sentence: {caption}",
        answer_field="New sentence",
        fields=("Nouns", "Selected noun", "New noun"),
    ),
    "replace_att": PromptTemplate(
        instruction=_lines(
            "Given an input sentence describing a scene, your task is to:",
            "    1. Locate the adjective words describing objects in the sentence. If there are no adjective words, "
            "return an empty list.",
            "    2. Randomly pick one adjective word.",
            "    3. Replace the selected adjective word with a new adjective word to make a new sentence.",
            *_TASK_SUFFIX,
            "Here are some examples:",
            "Original sentence: a blue bike parked on a side walk.",
            'Adjectives: ["blue"]',
            "Selected adjective: blue",
            "New adjective: red",
            "New sentence: a red bike parked on a side walk.",
            "Original sentence: The kitchen is clean and ready for us to see.",
        ),
        example_answer=_lines(
            'Adjectives: ["clean", "ready"]',
            "Selected adjective: clean",
            "New adjective: dirty",
            "New sentence: The kitchen is dirty and ready for us to see.",
        ),
        query="Original sentence: {caption}",
        answer_field="New sentence",
        fields=("Adjectives", "Selected adjective", "New adjective"),
    ),
    "replace_rel": PromptTemplate(
        instruction=_lines(
            "Given an input sentence describing a scene, your task is to:",
            "    1. Find any action or spatial relationships between two objects in the sentence. If there are no "
            "such relationships, return an empty list.",
            "    2. Randomly pick one relationship.",
            "    3. Replace the selected relationship with a new relationship to make a new sentence.",
            *_TASK_SUFFIX,
            "Here are some examples:",
            "Original sentence: The dining table near the kitchen has a bowl of fruit on it.",
            'Relationships: ["near", "on"]',
            "Selected relationship: near",
            "New relationship: far from",
            "New sentence: The dining table far from the kitchen has a bowl of fruit on it.",
            "Original sentence: A couple of buckets in a white room.",
        ),
        example_answer=_lines(
            "Relationships: ['in']",
            "Selected relationship: in",
            "New relationship: outside",
            "New sentence: A couple of buckets outside a white room.",
        ),
        query="Original sentence: {caption}",
        answer_field="New sentence",
        fields=("Relationships", "Selected relationship", "New relationship"),
    ),
    "swap_obj": PromptTemplate(
        instruction=_lines(
            "Given an input sentence describing a scene, your task is to first locate two swappable noun phrases "
            "in the sentence, and then swap them to make a new sentence.",
            *_SWAP_SUFFIX,
            *_swap_steps("noun phrases"),
            "Here are some examples:",
            "Input: A cat resting on a laptop next to a person.",
            _SWAP_QUESTION.format(what="noun phrases"),
            "Yes",
            "Swappable noun phrases: laptop, person",
            "Output: A cat resting on a person next to a laptop.",
            "Input: A plate of donuts with a person in the background.",
            _SWAP_QUESTION.format(what="noun phrases"),
        ),
        example_answer=_lines(
            "Yes",
            "Swappable noun phrases: a plate of donuts, a person",
            "Output: A person with a plate of donuts in the background.",
        ),
        query="Input: {caption}\n" + _SWAP_QUESTION.format(what="noun phrases"),
        answer_field="Output",
        fields=("Swappable noun phrases",),
        yes_no=True,
    ),
    "swap_att": PromptTemplate(
        instruction=_lines(
            "Given an input sentence describing a scene, your task is to first locate two swappable adjectives in "
            "the sentence describing different objects, and then swap them to make a new sentence.",
            *_SWAP_SUFFIX,
            *_swap_steps("adjectives"),
            "Here are some examples:",
            "Input: A girl in a pink shirt holding a blue umbrella.",
            _SWAP_QUESTION.format(what="attributes"),
            "Yes",
            "Swappable attributes: pink, blue",
            "Output: A girl in a blue shirt holding a pink umbrella.",
            "Input: A girl with a green shirt brushing her teeth with a blue toothbrush.",
            _SWAP_QUESTION.format(what="attributes"),
        ),
        example_answer=_lines(
            "Yes",
            "Swappable attributes: green, blue",
            "Output: A girl with a blue shirt brushing her teeth with a green toothbrush.",
        ),
        query="Input: {caption}\n" + _SWAP_QUESTION.format(what="attributes"),
        answer_field="Output",
        fields=("Swappable attributes",),
        yes_no=True,
    ),
    "add_obj": PromptTemplate(
        instruction=_lines(
            "Given an input sentence describing a scene, your task is:",
            "    1. Find the objects in the sentence.",
            "    2. Randomly pick one object.",
            "    3. Generate a new object that's not in the sentence.",
            "    4. Add the new object next to the selected object to make a new sentence.",
            *_ADD_SUFFIX,
            "Here are some examples:",
            "Original sentence: An elephant standing under the shade of a tree.",
            'Objects: ["elephant", "shade of a tree"]',
            "Selected object: elephant",
            "New object: squirrel",
            "New sentence: An elephant and a squirrel standing under the shade of a tree.",
            "Original sentence: A bench at the beach next to the sea",
        ),
        example_answer=_lines(
            "Objects: ['bench', 'beach', 'sea']",
            "Selected object: bench",
            "New object: umbrella",
            "New sentence: An umbrella and a bench at the beach next to the sea.",
        ),
        query="Original sentence: {caption}",
        answer_field="New sentence",
        fields=("Objects", "Selected object", "New object"),
    ),
    "add_att": PromptTemplate(
        instruction=_lines(
            "Given an input sentence describing a scene, your task is:",
            "    1. Find the objects in the sentence.",
            "    2. Randomly pick one object.",
            "    3. Generate a new plausible but uncommon attribute for this object that's not in the sentence.",
            "    4. Add the new attribute next to the selected object to make a new sentence.",
            *_ADD_SUFFIX,
            "Here are some examples:",
            "Original sentence: A large white airplane and a person on a lot.",
            'Objects: ["airplane", "person"]',
            "Selected object: airplane",
            "New attribute: blue",
            "New sentence: A large white and blue airplane and a person on a lot.",
            "Original sentence: three people riding horses on a beach",
        ),
        example_answer=_lines(
            "Objects: ['three people', 'horses', 'beach']",
            "Selected object: three people",
            "New attribute: elderly",
            "New sentence: Three elderly people riding horses on a beach.",
        ),
        query="Original sentence: {caption}",
        answer_field="New sentence",
        fields=("Objects", "Selected object", "New attribute"),
    ),
}


def prompt_messages(caption: str, subset: str) -> list[dict[str, str]]:
    """The chat messages of one (caption, subtype): instruction + example, example answer, the caption's query."""
    if subset not in TEMPLATES:
        raise ValueError(f"unknown SugarCrepe subset {subset!r}; expected one of {SUBSETS}")
    t = TEMPLATES[subset]
    return [
        {"role": "user", "content": t.instruction},
        {"role": "assistant", "content": t.example_answer},
        {"role": "user", "content": t.query.format(caption=caption.strip().replace("\n", " "))},
    ]


def render_prompt(messages: Sequence[Mapping[str, str]], tokenizer: Any) -> str:
    """The prompt text: the tokenizer's chat template (OpenChat's on a real run), else 'User:/Assistant:' turns."""
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template(list(messages), tokenize=False, add_generation_prompt=True)
    turns = [f"{'User' if m['role'] == 'user' else 'Assistant'}: {m['content']}" for m in messages]
    return "\n\n".join(turns) + "\n\nAssistant:"


# --- the template-following filter ---------------------------------------------------------------------


@dataclass(frozen=True)
class TemplateCheck:
    """The filter's verdict on one generation: kept or not, the new sentence, why, and the parsed fields."""

    ok: bool
    negative: str | None
    reason: str
    parsed: dict[str, str] = field(default_factory=dict)


def words(text: str) -> list[str]:
    """Lower-case word tokens (letters, digits, apostrophes): what the filter compares."""
    return re.findall(r"[a-z0-9']+", text.lower())


def parse_response(response: str, subset: str) -> dict[str, str]:
    """The fields an answer declares ('New sentence', 'Selected noun', ...; 'answer' = Yes/No for swaps)."""
    t = TEMPLATES[subset]
    names = (*t.fields, t.answer_field)
    found: dict[str, str] = {}
    lines = [ln.strip() for ln in response.strip().splitlines() if ln.strip()]
    if t.yes_no and lines:
        first = re.match(r"^(yes|no)\b", lines[0], flags=re.IGNORECASE)
        if first:
            found["answer"] = first.group(1).capitalize()
    for line in lines:
        for name in names:
            m = re.match(rf"^{re.escape(name)}\s*:\s*(.*)$", line, flags=re.IGNORECASE)
            if m and name not in found:
                found[name] = m.group(1).strip()
    return found


def _declared(parsed: Mapping[str, str], name: str) -> list[str]:
    """The words of a declared field (empty when not declared)."""
    return words(parsed.get(name, ""))


def _contains(haystack: Sequence[str], needle: Sequence[str]) -> bool:
    """Whether `needle` occurs as a contiguous run of words in `haystack` (an empty needle always does)."""
    n = len(needle)
    return n == 0 or any(list(haystack[i : i + n]) == list(needle) for i in range(len(haystack) - n + 1))


def _has_kind(ws: Sequence[str], kind: str, lexicon: Mapping[str, str] | None) -> bool:
    """Whether the words include one of `kind` by the lexicon (always true without a lexicon)."""
    if lexicon is None:
        return True
    return any(lexicon.get(w) == kind for w in ws)


def _edit_follows(
    subset: str, old: list[str], new: list[str], parsed: Mapping[str, str], lexicon: Mapping[str, str] | None
) -> bool:
    """Whether the word-level edit old -> new is of the subtype's kind (module docstring)."""
    kind, t = EDIT_KIND[subset], TEMPLATES[subset]
    if subset.startswith("replace"):
        ops = [op for op in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes() if op[0] != "equal"]
        if len(ops) != 1 or ops[0][0] != "replace":
            return False
        _, i1, i2, j1, j2 = ops[0]
        removed, inserted = old[i1:i2], new[j1:j2]
        selected, replacement = _declared(parsed, t.fields[1]), _declared(parsed, t.fields[2])
        if not (_contains(removed, selected) or _contains(selected, removed)):
            return False
        if not (_contains(inserted, replacement) or _contains(replacement, inserted)):
            return False
        return _has_kind(removed, kind, lexicon) and _has_kind(inserted, kind, lexicon)
    if subset.startswith("swap"):
        if Counter(old) != Counter(new):
            return False
        phrases = [words(p) for p in parsed.get(t.fields[0], "").split(",") if words(p)]
        if len(phrases) != 2 or not all(_contains(old, p) and _contains(new, p) for p in phrases):
            return False
        moved = [w for w, v in zip(old, new) if w != v]
        return _has_kind(moved, kind, lexicon)
    # add: the caption's words (articles aside) kept in order, words inserted
    a, b = [w for w in old if w not in ARTICLES], [w for w in new if w not in ARTICLES]
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    ops = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    if not ops or any(op[0] != "insert" for op in ops):
        return False
    inserted = [w for op in ops for w in b[op[3] : op[4]]]
    if not _contains(inserted, [w for w in _declared(parsed, t.fields[2]) if w not in ARTICLES]):
        return False
    return _has_kind(inserted, kind, lexicon)


def check_template(
    original: str, response: str, subset: str, lexicon: Mapping[str, str] | None = None
) -> TemplateCheck:
    """The template-following filter on one LLM answer (module docstring): keep it, or say why not."""
    if subset not in TEMPLATES:
        raise ValueError(f"unknown SugarCrepe subset {subset!r}; expected one of {SUBSETS}")
    t = TEMPLATES[subset]
    parsed = parse_response(response, subset)
    if t.yes_no and parsed.get("answer") == "No":
        return TemplateCheck(False, None, "declined", parsed)
    sentence = parsed.get(t.answer_field, "").strip()
    if not sentence or (t.yes_no and parsed.get("answer") != "Yes"):
        return TemplateCheck(False, None, "no_template", parsed)
    if re.search(r"[.!?]\s+\S", sentence):
        return TemplateCheck(False, None, "not_one_sentence", parsed)
    if sentence.endswith("?"):
        return TemplateCheck(False, None, "question", parsed)
    old, new = words(original), words(sentence)
    if old == new:
        return TemplateCheck(False, None, "unchanged", parsed)
    if not _edit_follows(subset, old, new, parsed, lexicon):
        return TemplateCheck(False, None, "wrong_edit", parsed)
    return TemplateCheck(True, sentence, "ok", parsed)


def world_lexicon() -> dict[str, str]:
    """The world's words by kind: shapes (and plurals) and generic nouns, colours and sizes, relation phrases."""
    from itmbench.world.captions import GENERIC_NOUNS, RELATION_WORDS
    from itmbench.world.scene import COLOURS, SHAPES, SIZES

    lexicon = {w: "noun" for s in (*SHAPES, *GENERIC_NOUNS) for w in (s, s + "s")}
    lexicon.update({w: "adjective" for w in (*COLOURS, *SIZES)})
    for phrases in RELATION_WORDS.values():  # the word that carries each relation phrase: left, top, above, ...
        for phrase in phrases:
            lexicon[words(phrase)[-2] if phrase.endswith(" of") else words(phrase)[-1]] = "relation"
    return lexicon


# --- generation --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LLMConfig:
    """TROHN-Text generation settings (defaults: BiVLC's released script)."""

    SECTION: ClassVar[str] = "$defs.llm"

    model: str
    dtype: str
    subsets: tuple[str, ...]
    max_new_tokens: int
    do_sample: bool
    temperature: float | None  # None: the model's generation config
    top_p: float | None
    batch_size: int
    seed: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "subsets", tuple(self.subsets))
        unknown = [s for s in self.subsets if s not in SUBSETS]
        if unknown or not self.subsets:
            raise ValueError(f"llm params: subsets {list(self.subsets)}; expected names among {SUBSETS}")
        for name in ("max_new_tokens", "batch_size"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"llm params: {name} = {getattr(self, name)}; expected a positive integer")


def build_text_generation_pipeline(cfg: LLMConfig | None = None, device: str | None = None) -> Any:
    """The transformers text-generation pipeline of `cfg.model`, loaded by name (network or Hugging Face cache) or
    by the path of a `save_pretrained` folder. No device: the GPU when there is one, else the CPU (a device map
    would need `accelerate`, which the environment does not install; OpenChat-3.5 fits one GPU)."""
    cfg = cfg or make_config(LLMConfig)
    from transformers import pipeline

    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    return pipeline("text-generation", model=cfg.model, dtype=getattr(torch, cfg.dtype), device=device)


def _batch_seed(seed: int, subset: str, captions: Sequence[str]) -> int:
    """The sampling seed of one batch of prompts: (seed, subtype, the batch's captions)."""
    h = hashlib.sha256(f"{seed}\x1f{subset}\x1f".encode() + "\x1e".join(captions).encode()).digest()
    return int.from_bytes(h[:8], "little") & (2**63 - 1)


def generate_negatives(
    pipe: Callable[..., Any],
    captions: Sequence[str],
    cfg: LLMConfig | None = None,
    caption_ids: Sequence[int] | None = None,
    lexicon: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """One LLM negative per (caption, subtype), filtered by `check_template`; one row per pair (NEGATIVE_COLUMNS)."""
    cfg = cfg or make_config(LLMConfig)
    ids = list(range(len(captions))) if caption_ids is None else [int(i) for i in caption_ids]
    if len(ids) != len(captions):
        raise ValueError(f"llm negatives: {len(ids)} caption ids for {len(captions)} captions; expected one each")
    tokenizer = pipe.tokenizer
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token  # as the released script: pad with end-of-sequence
    tokenizer.padding_side = "left"  # decoder-only batches pad on the left
    options: dict[str, Any] = {
        "max_new_tokens": cfg.max_new_tokens,
        "do_sample": cfg.do_sample,
        "return_full_text": False,
        "pad_token_id": tokenizer.pad_token_id,
    }
    options.update({k: getattr(cfg, k) for k in ("temperature", "top_p") if getattr(cfg, k) is not None})
    rows: list[tuple] = []
    for subset in cfg.subsets:
        kind, subtype = split_subset(subset)
        for start in range(0, len(captions), cfg.batch_size):
            batch = [str(c) for c in captions[start : start + cfg.batch_size]]
            prompts = [render_prompt(prompt_messages(c, subset), tokenizer) for c in batch]
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(_batch_seed(cfg.seed, subset, batch))
                outputs = pipe(prompts, batch_size=len(prompts), **options)
            if len(outputs) != len(batch):
                raise RuntimeError(f"llm negatives: {len(outputs)} outputs for {len(batch)} prompts; expected equal")
            for k, (caption, out) in enumerate(zip(batch, outputs)):
                response = (out[0] if isinstance(out, list) else out)["generated_text"]
                check = check_template(caption, response, subset, lexicon)
                rows.append(
                    (ids[start + k], caption, subset, kind, subtype, response, check.negative, check.ok, check.reason)
                )
    return pd.DataFrame(rows, columns=list(NEGATIVE_COLUMNS)).astype(
        {"caption_id": "int64", "follows_template": "bool"}
    )


def filter_summary(negatives: pd.DataFrame) -> pd.DataFrame:
    """Generations per subtype and reason (the TROHN-Text kept-vs-generated count, 3.65M of 4.14M in the paper)."""
    table = negatives.groupby(["subset", "reason"]).size().unstack(fill_value=0)
    table = table.reindex(columns=list(REASONS), fill_value=0)
    table["kept_percent"] = 100.0 * table["ok"] / table.sum(axis=1)
    return table.reset_index()
