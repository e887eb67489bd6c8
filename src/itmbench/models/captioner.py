"""The captioner: open_clip's CoCa behind a cross-scorer interface, scored by length-normalised log-likelihood.

s(q, I) = (1/T) * sum_t log p(w_t | w_<t, I) over the caption's tokens w_1..w_T, the end-of-caption
token included (BISON section 5 scores captioning models this way; NOTES.md). Decisions:
- Tokens: a word vocabulary fitted on the world's train captions (`WordTokenizer`), not open_clip's
  49,408-entry BPE: a 256-entry output layer keeps the tiny captioner's softmax cheap. Ids: 0 pad,
  1 start, 2 end, 3 unknown word, then the words in sorted order. The vocabulary travels in the
  checkpoint.
- open_clip's CoCa text tower places the [CLS] key mask one position off ("legacy mode" for the
  released weights); a captioner trained here from scratch uses the correct mask
  (`correct_cls_mask = True`), so the contrastive [CLS] embedding does not depend on padding.
- open_clip never initialises the CoCa decoder's output projection (`torch.empty`); it is
  initialised here like CLIP's text projection, N(0, width^-1/2), before training.
- Pairs are scored in batches: each unique image and caption is encoded once, the decoder runs on
  (image tokens, caption tokens) per pair, on the batch's tokens trimmed to its longest caption
  (causal attention: padding never changes a caption's scores; tested against a per-pair loop).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from itmbench.models.openclip import OpenClipEncoder, register_local_configs
from itmbench.models.spec import ModelSpec, autocast, load_checkpoint

PAD, START, END, UNKNOWN = 0, 1, 2, 3
SPECIALS = ("<pad>", "<start>", "<end>", "<unk>")


def words(text: str) -> list[str]:
    """A caption's word tokens (lower-cased letters and digits)."""
    return re.findall(r"[a-z0-9]+", text.lower())


class WordTokenizer:
    """Word ids with start/end/pad, fitted on train captions; callable like open_clip's tokenizers."""

    def __init__(self, vocab: Sequence[str], context_length: int) -> None:
        self.vocab = list(vocab)
        self.context_length = int(context_length)
        self.index = {w: i + len(SPECIALS) for i, w in enumerate(self.vocab)}

    @staticmethod
    def fit(
        texts: Sequence[str], context_length: int, vocab_size: int, source: str = "train captions"
    ) -> WordTokenizer:
        """Every word of `texts`, sorted; an error names the count when the model's vocabulary is too small."""
        vocab = sorted({w for t in texts for w in words(t)})
        if len(vocab) + len(SPECIALS) > vocab_size:
            raise ValueError(
                f"{source}: {len(vocab)} distinct words + {len(SPECIALS)} specials exceed the captioner's "
                f"vocab_size {vocab_size}; use an architecture with a larger vocabulary"
            )
        return WordTokenizer(vocab, context_length)

    def ids(self, text: str) -> list[int]:
        """[start, words..., end], truncated so that the end token always fits."""
        body = [self.index.get(w, UNKNOWN) for w in words(text)][: self.context_length - 2]
        return [START, *body, END]

    def __call__(self, texts: Sequence[str]) -> torch.Tensor:
        """Token ids [N, context_length], padded with 0."""
        out = torch.zeros((len(texts), self.context_length), dtype=torch.long)
        for r, t in enumerate(texts):
            ids = self.ids(t)
            out[r, : len(ids)] = torch.tensor(ids, dtype=torch.long)
        return out

    def state(self) -> dict[str, Any]:
        """What the checkpoint stores."""
        return {"vocab": list(self.vocab), "context_length": self.context_length}


def trim(tokens: torch.Tensor) -> torch.Tensor:
    """Drop the padding columns after the longest caption of a batch."""
    length = int((tokens != PAD).sum(dim=1).max()) if len(tokens) else 1
    return tokens[:, : max(length, 2)]


def token_log_likelihoods(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Length-normalised log-likelihood per row: mean of log p(label) over the non-pad labels."""
    logp = torch.log_softmax(logits.float(), dim=-1).gather(-1, labels.unsqueeze(-1)).squeeze(-1)
    mask = (labels != PAD).to(logp.dtype)
    return (logp * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)


class CaptionerScorer(OpenClipEncoder):
    """A CoCa model as a cross scorer: s(caption, image) for the pairs a benchmark asks for."""

    item_kinds: tuple[str, ...] = ()  # gives no item embeddings: it scores pairs

    @torch.no_grad()
    def _image_tokens(self, images: np.ndarray) -> torch.Tensor:
        """The visual tower's tokens [N, P, W] that the decoder cross-attends to."""
        with autocast(self.device):
            _, tokens = self.model._encode_image(self.image_tensor(images))
        return tokens

    @torch.no_grad()
    def _text_tokens(self, tokens: torch.Tensor) -> torch.Tensor:
        """The text tower's token embeddings [N, L, W] (the [CLS] token dropped)."""
        with autocast(self.device):
            _, embs = self.model._encode_text(tokens.to(self.device))
        return embs

    @torch.no_grad()
    def log_likelihoods(self, images: np.ndarray, texts: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """s(texts[k], images[k]) for each row k (float64)."""
        self.model.eval()
        out = np.zeros(len(texts), dtype=np.float64)
        for s in range(0, len(texts), batch_size):
            tokens = trim(self.text_tensor(list(texts[s : s + batch_size])).cpu())
            img = self._image_tokens(images[s : s + batch_size])
            txt = self._text_tokens(tokens)
            out[s : s + len(tokens)] = self._decode(img, txt, tokens)
        return out

    def _decode(self, img: torch.Tensor, txt: torch.Tensor, tokens: torch.Tensor) -> np.ndarray:
        """Teacher-forced decoding of caption tokens given image tokens; the mean log-probability per row."""
        with autocast(self.device):
            logits = self.model.text_decoder(img, txt[:, :-1])
        labels = tokens[:, 1:].to(logits.device)
        return token_log_likelihoods(logits, labels).double().cpu().numpy()

    @torch.no_grad()
    def greedy_captions(self, images: np.ndarray, batch_size: int = 256) -> list[str]:
        """A caption generated for each image by greedy decoding: from the start token, the most probable next
        token given the image and the tokens so far (pad, start, unknown and ids past the vocabulary excluded),
        until the end token or the context length; the words joined by spaces."""
        self.model.eval()
        context = self.tokenizer.context_length
        vocab = ["", "", "", "", *self.tokenizer.vocab]
        out: list[str] = []
        for s in range(0, len(images), batch_size):
            img = self._image_tokens(images[s : s + batch_size])
            tokens = torch.full((len(img), 1), START, dtype=torch.long)
            done = torch.zeros(len(img), dtype=torch.bool)
            while tokens.shape[1] < context and not bool(done.all()):
                txt = self._text_tokens(tokens)
                with autocast(self.device):
                    logits = self.model.text_decoder(img, txt)[:, -1].float()
                logits[:, [PAD, START, UNKNOWN]] = -torch.inf
                logits[:, len(vocab) :] = -torch.inf  # output ids past the vocabulary name no word
                step = logits.argmax(dim=-1).cpu()
                step[done] = END  # a finished caption only repeats its end token
                tokens = torch.cat([tokens, step[:, None]], dim=1)
                done |= step == END
            for row in tokens[:, 1:].tolist():
                ids = row[: row.index(END)] if END in row else row
                out.append(" ".join(vocab[i] for i in ids))
        return out

    @torch.no_grad()
    def score_pairs(
        self,
        store: Any,
        caption_ids: np.ndarray,
        image_ids: np.ndarray,
        features: Any = None,
        batch_size: int = 512,
    ) -> np.ndarray:
        """s(caption, image) of each (caption_ids[k], image_ids[k]); every item is encoded once."""
        self.model.eval()
        caption_ids, image_ids = np.asarray(caption_ids, np.int64), np.asarray(image_ids, np.int64)
        if len(caption_ids) != len(image_ids):
            raise ValueError(f"{len(caption_ids)} caption ids for {len(image_ids)} image ids; expected equal")
        if len(caption_ids) == 0:
            return np.zeros(0, dtype=np.float64)
        uniq_img, img_row = np.unique(image_ids, return_inverse=True)
        uniq_cap, cap_row = np.unique(caption_ids, return_inverse=True)
        img = torch.cat(
            [self._image_tokens(store.image_batch(uniq_img[s : s + 256])) for s in range(0, len(uniq_img), 256)]
        )
        tokens = self.text_tensor(store.texts(uniq_cap)).cpu()
        txt = torch.cat([self._text_tokens(tokens[s : s + 1024]) for s in range(0, len(tokens), 1024)])
        out = np.zeros(len(caption_ids), dtype=np.float64)
        # pairs ordered by caption length so that each batch trims to its own longest caption
        lengths = (tokens != PAD).sum(dim=1).numpy()
        order = np.argsort(lengths[cap_row], kind="stable")
        for s in range(0, len(order), batch_size):
            rows = order[s : s + batch_size]
            tok = trim(tokens[cap_row[rows]])
            t = tok.shape[1]
            out[rows] = self._decode(img[img_row[rows]], txt[cap_row[rows], :t], tok)
        return out


def build_captioner(
    spec: ModelSpec, device: torch.device, checkpoint: str | Path | None = None, tokenizer: WordTokenizer | None = None
) -> CaptionerScorer:
    """A CoCa captioner by architecture name: trained weights and vocabulary from a checkpoint, or a fresh one."""
    import open_clip

    register_local_configs()
    if spec.arch is None:
        raise ValueError(f"models.{spec.name}: family coca needs an `arch` (e.g. itm-coca-tiny)")
    model, _, _ = open_clip.create_model_and_transforms(spec.arch, pretrained=None, device=device)
    if not hasattr(model, "text_decoder"):
        raise ValueError(f"models.{spec.name}: arch {spec.arch!r} is not a CoCa architecture (no text decoder)")
    model.text.correct_cls_mask = True
    # open_clip leaves the decoder's output projection as torch.empty (its init_parameters is never
    # called, and would fail): initialise it as CLIP initialises its text projection
    with torch.no_grad():
        torch.nn.init.normal_(model.text_decoder.text_projection, std=model.text_decoder.width**-0.5)
    context = int(model.text.context_length)
    if checkpoint is not None:
        state = load_checkpoint(checkpoint)
        if "tokenizer" not in state:
            raise ValueError(f"{checkpoint}: a captioner checkpoint needs its 'tokenizer' (vocabulary)")
        model.load_state_dict(state["state_dict"])
        tokenizer = WordTokenizer(state["tokenizer"]["vocab"], state["tokenizer"]["context_length"])
    if tokenizer is None:
        raise ValueError(f"models.{spec.name}: a captioner needs its trained checkpoint (weights and vocabulary)")
    if tokenizer.context_length != context:
        raise ValueError(f"models.{spec.name}: tokenizer context {tokenizer.context_length}; the arch has {context}")
    return CaptionerScorer(model, tokenizer, device)
