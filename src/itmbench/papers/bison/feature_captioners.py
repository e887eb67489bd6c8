"""BISON Table 6 in the world: three captioning systems trained on each of two sets of frozen image features.

The paper (appendix D.2 and "Visual Features") trains ShowTell, ShowAttTell and UpDown on the COCO train captions
over the 7 x 7 x 2048 penultimate activations of two ConvNets (ResNet-IN, ResNeXt-IG-3.5B), reshaped to 49 regions,
and reports their captioning scores and BISON accuracy (Table 6); ResNeXt-IG-3.5B's features raise every measure of
every system. In the world the two feature sets are the frozen image towers of two trained world models
(params `bison_captioners.towers`, by default `clip`'s ViT and `clip_rn`'s ResNet, Table 7's pair): the last
grid their pooling reads (`grid_features`: the ViT's class and patch tokens after its last block and `ln_post`,
the ResNet's `layer4` map, its batch norms on their running statistics), one region per token or cell.

The systems, as the appendix describes them (`FeatureCaptioner`):

- **ShowTell**: the regions averaged, a linear layer to the word-embedding size, fed to the caption LSTM as its
  first input; then the words;
- **ShowAttTell** (Xu et al. with Rennie et al.'s change, "Att2in"): at each word an attention over the regions
  from the LSTM's previous state; the attended feature enters the LSTM's cell input only (the candidate of the
  memory cell), the previous word's embedding its gates and cell as usual;
- **UpDown** (Anderson et al.): two LSTMs. The attention LSTM reads the language LSTM's previous state, the mean
  region and the previous word; its state attends over the regions; the language LSTM reads the attended
  feature, the attention LSTM's state and (as BISON's appendix describes its implementation) the previous word.

The regions are projected to the LSTM size by a linear layer and a ReLU before attention (every attention model
of the captioning codebases does so); the word embeddings are initialised uniformly in [-0.1, 0.1] (the
appendix). Training: the cross-entropy per word averaged over the words of the batch's reference captions (the
appendix), Adam at `lr`, `batch_size` captions per step, `epochs` passes over the train split's captions in a
seeded order, the last epoch kept. The vocabulary is every word of the train captions (the world's vocabulary
is tens of words, all frequent; the paper's is the 9,487 words of COCO's). Captions are decoded greedily (the
world's Table 4 does the same; the paper's systems use beam search). BISON: the caption's log-likelihood given
the image divided by its length (the appendix, "Using Captioning Systems for the BISON Task").

Table 6's second block fine-tunes each cross-entropy system by self-critical sequence training (`self_critical`,
Rennie et al.; the appendix: REINFORCE over CIDEr, Adam at lr 1e-3, batch 128, thirty more epochs): a caption
drawn from the model rewarded by its CIDEr-D over the greedy caption's, the IDF that of the train split's reference
sets (`itmbench.metrics.cider.CorpusCiderD`, pycocoevalcap's CIDEr-D with a fixed corpus); `scst_epochs` 0 skips it.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import torch
from torch import nn

from itmbench.models.captioner import END, PAD, SPECIALS, START, WordTokenizer, token_log_likelihoods, trim
from itmbench.papers.bison import captioning
from itmbench.papers.bison.config import BisonCaptionersConfig

log = logging.getLogger(__name__)

SYSTEMS: dict[str, str] = {"showtell": "ShowTell", "showatttell": "ShowAttTell", "updown": "UpDown"}


@torch.no_grad()
def grid_features(encoder, images: np.ndarray, batch_size: int = 256) -> torch.Tensor:
    """The image tower's last grid, float32 [N, regions, width]: a ViT's tokens after its last block and `ln_post`
    (the class token, which its pooling reads, then the patches), a ModifiedResNet's `layer4` cells (what its
    attention pool reads); `encoder` an `OpenClipEncoder`."""
    encoder.model.eval()  # a ResNet's batch norms read their running statistics, not the batch's
    visual = encoder.model.visual
    out = []
    for start in range(0, len(images), batch_size):
        x = encoder.image_tensor(images[start : start + batch_size])
        if all(hasattr(visual, part) for part in ("stem", "layer4", "attnpool")):  # open_clip's ModifiedResNet
            x = visual.layer4(visual.layer3(visual.layer2(visual.layer1(visual.stem(x)))))
            grid = x.flatten(2).transpose(1, 2)
        elif all(hasattr(visual, part) for part in ("_embeds", "transformer", "_pool")):  # open_clip's ViT
            pooled, tokens = visual._pool(visual.transformer(visual._embeds(x)))
            grid = torch.cat([pooled[:, None, :], tokens], dim=1) if visual.pool_type == "tok" else tokens
        else:
            raise ValueError(
                f"image tower {type(visual).__name__}: expected open_clip's VisionTransformer or ModifiedResNet"
            )
        out.append(grid.float().cpu())
    return torch.cat(out) if out else torch.zeros((0, 0, 0))


class FeatureCaptioner(nn.Module):
    """One of `SYSTEMS` over region features [N, R, D]: teacher-forced logits, length-normalised log-likelihoods
    and greedy captions."""

    def __init__(self, system: str, feature_dim: int, vocab_size: int, embed: int, hidden: int) -> None:
        super().__init__()
        if system not in SYSTEMS:
            raise ValueError(f"captioning system {system!r}: expected one of {list(SYSTEMS)}")
        self.system, self.hidden = system, hidden
        self.words = nn.Embedding(vocab_size, embed, padding_idx=PAD)
        nn.init.uniform_(self.words.weight, -0.1, 0.1)
        self.out = nn.Linear(hidden, vocab_size)
        if system == "showtell":
            self.image_in = nn.Linear(feature_dim, embed)
            self.lstm = nn.LSTMCell(embed, hidden)
            return
        self.regions = nn.Sequential(nn.Linear(feature_dim, hidden), nn.ReLU())
        self.att_feat, self.att_state, self.att_score = (
            nn.Linear(hidden, hidden),
            nn.Linear(hidden, hidden),
            nn.Linear(hidden, 1),
        )
        if system == "showatttell":
            self.gates = nn.Linear(embed + hidden, 4 * hidden)  # i, f, o and the cell candidate from word and state
            # Att2in: the attended feature enters the cell candidate only
            self.cell_in = nn.Linear(hidden, hidden, bias=False)
        else:
            self.att_lstm = nn.LSTMCell(hidden + hidden + embed, hidden)
            self.lang_lstm = nn.LSTMCell(hidden + hidden + embed, hidden)

    def _attend(self, v: torch.Tensor, v_keys: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        """The regions `v` [N, R, H] weighted by softmax(w^T tanh(W_v v_i + W_h h))."""
        weights = torch.softmax(self.att_score(torch.tanh(v_keys + self.att_state(h)[:, None, :])).squeeze(-1), dim=1)
        return (weights[:, :, None] * v).sum(dim=1)

    def _start(self, features: torch.Tensor):
        """The decoder's state before the first word, and what each step reads of the image."""
        zeros = features.new_zeros((len(features), self.hidden))
        if self.system == "showtell":
            state = self.lstm(self.image_in(features.mean(dim=1)), (zeros, zeros))
            return state, None
        v = self.regions(features)
        context = (v, self.att_feat(v), v.mean(dim=1))
        if self.system == "showatttell":
            return (zeros, zeros), context
        return (zeros, zeros, zeros, zeros), context

    def _step(self, x: torch.Tensor, state, context):
        """One word's embedding in, the state read out for the next word, and the new state."""
        if self.system == "showtell":
            h, c = self.lstm(x, state)
            return h, (h, c)
        v, v_keys, v_mean = context
        if self.system == "showatttell":
            h, c = state
            att = self._attend(v, v_keys, h)
            i, f, o, g = self.gates(torch.cat([x, h], dim=1)).chunk(4, dim=1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g + self.cell_in(att))
            h = torch.sigmoid(o) * torch.tanh(c)
            return h, (h, c)
        h_att, c_att, h_lang, c_lang = state
        h_att, c_att = self.att_lstm(torch.cat([h_lang, v_mean, x], dim=1), (h_att, c_att))
        att = self._attend(v, v_keys, h_att)
        h_lang, c_lang = self.lang_lstm(torch.cat([att, h_att, x], dim=1), (h_lang, c_lang))
        return h_lang, (h_att, c_att, h_lang, c_lang)

    def forward(self, features: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        """Teacher-forced logits [N, T-1, V] of tokens[:, 1:] given tokens[:, :-1] ([START, words, END, PAD...])."""
        state, context = self._start(features)
        words = self.words(tokens[:, :-1])
        outs = []
        for t in range(words.shape[1]):
            h, state = self._step(words[:, t], state, context)
            outs.append(h)
        return self.out(torch.stack(outs, dim=1))

    @torch.no_grad()
    def log_likelihood(self, features: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        """Each caption's log-likelihood given its image divided by its length (its words and END)."""
        return token_log_likelihoods(self(features, tokens), tokens[:, 1:])

    @torch.no_grad()
    def greedy(self, features: torch.Tensor, max_len: int) -> torch.Tensor:
        """Word ids [N, <= max_len] of each image's greedy caption, PAD after its END."""
        return self.decode(features, max_len)[0]

    def decode(
        self, features: torch.Tensor, max_len: int, generator: torch.Generator | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Each image's caption, word by word until END or `max_len` words: the most likely word (greedy), or a
        word drawn from the model's distribution with `generator` (SCST's sample). Word ids [N, T] (PAD after END)
        and each caption's summed log-probability of its words and END (differentiable when sampling)."""
        state, context = self._start(features)
        word = torch.full((len(features),), START, dtype=torch.long)
        done = torch.zeros(len(features), dtype=torch.bool)
        out, total = [], features.new_zeros(len(features))
        for _ in range(max_len):
            h, state = self._step(self.words(word), state, context)
            logits = self.out(h)
            logits[:, PAD] = -math.inf
            logits[:, START] = -math.inf
            logp = torch.log_softmax(logits, dim=1)
            if generator is None:
                chosen = logp.argmax(dim=1)
            else:
                chosen = torch.multinomial(logp.detach().exp(), 1, generator=generator).squeeze(1)
            total = total + torch.where(done, 0.0, logp.gather(1, chosen[:, None]).squeeze(1))
            word = torch.where(done, torch.full_like(chosen, PAD), chosen)
            out.append(word)
            done = done | (word == END)
            if bool(done.all()):
                break
        ids = torch.stack(out, dim=1) if out else torch.zeros((len(features), 0), dtype=torch.long)
        return ids, total


def train_captioner(
    system: str,
    features: torch.Tensor,
    image_rows: np.ndarray,
    texts: Sequence[str],
    tokenizer: WordTokenizer,
    options: BisonCaptionersConfig,
) -> FeatureCaptioner:
    """A system trained on (image, caption) pairs: caption i describes the image of row `image_rows[i]` of
    `features`; cross-entropy per word over the batch's words, Adam, the last epoch kept."""
    torch.manual_seed(options.seed)
    model = FeatureCaptioner(system, features.shape[2], len(tokenizer.vocab) + 4, options.embed, options.hidden)
    tokens = tokenizer(list(texts))
    rows = torch.as_tensor(np.asarray(image_rows, dtype=np.int64))
    opt = torch.optim.Adam(model.parameters(), lr=options.lr)
    rng = np.random.default_rng(options.seed)
    start = time.time()
    model.train()
    for epoch in range(options.epochs):
        order = torch.as_tensor(rng.permutation(len(tokens)))
        total, words = 0.0, 0
        for b in range(0, len(order), options.batch_size):
            idx = order[b : b + options.batch_size]
            batch = trim(tokens[idx])
            logits = model(features[rows[idx]], batch)
            labels = batch[:, 1:]
            loss = nn.functional.cross_entropy(
                logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=PAD
            )
            opt.zero_grad()
            loss.backward()
            opt.step()
            n = int((labels != PAD).sum())
            total, words = total + loss.item() * n, words + n
        if epoch % 5 == 0 or epoch == options.epochs - 1:
            log.info(
                "%s epoch %d: cross-entropy per word %.4f (%.0f s)",
                system,
                epoch,
                total / max(words, 1),
                time.time() - start,
            )
    return model.eval()


def self_critical(
    model: FeatureCaptioner,
    features: torch.Tensor,
    references: Sequence[Sequence[str]],
    tokenizer: WordTokenizer,
    options: BisonCaptionersConfig,
) -> FeatureCaptioner:
    """Self-critical sequence training (Rennie et al.) of a cross-entropy-trained system, in place: for each image
    of a batch (`batch_size` images in a seeded order, `scst_epochs` passes over the images of `features`), a
    caption drawn from the model and its greedy caption, each scored by CIDEr-D against the image's references
    (`references[i]`, PTB-tokenized; the IDF over all of them: `CorpusCiderD`); the loss is minus the drawn
    caption's log-probability times its reward over the greedy one's, averaged over the batch; Adam at `lr`."""
    from itmbench.metrics.cider import CorpusCiderD

    cider = CorpusCiderD(references)
    opt = torch.optim.Adam(model.parameters(), lr=options.lr)
    rng = np.random.default_rng(options.seed)
    gen = torch.Generator().manual_seed(options.seed)
    start = time.time()
    model.train()
    for epoch in range(options.scst_epochs):
        rewards = []
        for batch in np.array_split(rng.permutation(len(features)), max(1, -(-len(features) // options.batch_size))):
            refs = [references[i] for i in batch]
            with torch.no_grad():
                greedy = decode(tokenizer, model.decode(features[batch], options.max_len)[0])
            drawn_ids, logp = model.decode(features[batch], options.max_len, generator=gen)
            drawn = cider.scores(decode(tokenizer, drawn_ids), refs, keys=batch.tolist())
            baseline = cider.scores(greedy, refs, keys=batch.tolist())
            loss = -(torch.as_tensor(drawn - baseline, dtype=logp.dtype) * logp).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            rewards.append(baseline.mean())
        if epoch % 5 == 0 or epoch == options.scst_epochs - 1:
            log.info("%s SCST epoch %d: greedy CIDEr-D %.4f (%.0f s)", model.system, epoch, float(np.mean(rewards)),
                     time.time() - start)  # fmt: skip
    return model.eval()


def decode(tokenizer: WordTokenizer, ids: torch.Tensor) -> list[str]:
    """Greedy word ids as text: the words before END (an unknown-word id reads as <unk>)."""
    words = [*SPECIALS, *tokenizer.vocab]
    out = []
    for row in ids.tolist():
        text = []
        for i in row:
            if i in (END, PAD):
                break
            text.append(words[i])
        out.append(" ".join(text))
    return out


def log_likelihoods(
    model: FeatureCaptioner,
    features: torch.Tensor,
    texts: Sequence[str],
    tokenizer: WordTokenizer,
    batch_size: int = 1024,
) -> np.ndarray:
    """Length-normalised log-likelihood of texts[i] given features[i], float64."""
    out = []
    for b in range(0, len(texts), batch_size):
        tokens = trim(tokenizer(list(texts[b : b + batch_size])))
        out.append(model.log_likelihood(features[b : b + batch_size], tokens).double().numpy())
    return np.concatenate(out) if out else np.zeros(0)


def greedy_captions(
    model: FeatureCaptioner, features: torch.Tensor, tokenizer: WordTokenizer, max_len: int, batch_size: int = 1024
) -> list[str]:
    """Each image's greedy caption."""
    out: list[str] = []
    for b in range(0, len(features), batch_size):
        out += decode(tokenizer, model.greedy(features[b : b + batch_size], max_len))
    return out


# --- One tower's systems, end to end (the rule bison_feature_captioners, one job per tower) ---------------------

CELL_COLUMNS = ("tower", "training", "system", "metric", "value", "lo", "hi", "n")
TRAININGS = ("cross-entropy", "self-critical")  # the paper's two blocks: the second fine-tunes the first


def tower_cells(
    encoder,
    store,
    captions,
    annotations,
    options: BisonCaptionersConfig,
    bison_split: str,
    metrics: Sequence[str],
    score: dict,
    tower: str,
    features=None,
):
    """Every system of `options.systems` trained on `tower`'s frozen grid features of the train split's images and
    captions, then scored: its greedy caption of each image of `options.caption_split` by each captioning metric of
    `metrics` against the image's captions (x100, bootstrap intervals over images: `captioning.metric_cells`),
    and its BISON accuracy on `annotations` (queries of `bison_split`; Wilson interval). A long frame of
    CELL_COLUMNS (metric 'bison' for the accuracy). `features(encoder, images)`: the regions read (default
    `grid_features`; benchmarks/bison_showtell_feature.py gives others)."""
    from itmbench.papers.bison import queries
    from itmbench.papers.bison.score import score_frame, summarize

    train = queries.split_captions(captions, "train", "the source's captions")
    held = queries.split_captions(captions, options.caption_split, "the source's captions")
    bison_caps = queries.split_captions(captions, bison_split, "the source's captions")
    tokenizer = WordTokenizer.fit(train["text"].astype(str).tolist(), options.max_len + 2, 1 << 30)
    train_ids = np.unique(train["image_id"].to_numpy(np.int64))
    held_ids = np.unique(held["image_id"].to_numpy(np.int64))
    pair_ids = np.unique(annotations[["true_image_id", "false_image_id"]].to_numpy(np.int64))
    start = time.process_time()
    features = features or grid_features
    train_f = features(encoder, store.image_batch(train_ids))
    held_f = features(encoder, store.image_batch(held_ids))
    pair_f = features(encoder, store.image_batch(pair_ids))
    log.info("%s: grid features %s of %d+%d+%d images (%.1f CPU-s)", tower, tuple(train_f.shape[1:]),
             len(train_ids), len(held_ids), len(pair_ids), time.process_time() - start)  # fmt: skip
    texts = dict(zip(bison_caps["caption_id"].astype("int64"), bison_caps["text"].astype(str)))
    missing = [int(c) for c in annotations["caption_id"] if int(c) not in texts]
    if missing:
        raise ValueError(f"BISON query caption_id {missing[0]} is not a caption of split {bison_split!r}")
    query = [texts[int(c)] for c in annotations["caption_id"]]
    rows_true = np.searchsorted(pair_ids, annotations["true_image_id"].to_numpy(np.int64))
    rows_false = np.searchsorted(pair_ids, annotations["false_image_id"].to_numpy(np.int64))
    references = None
    if options.scst_epochs:  # SCST's rewards: each train image's captions, PTB-tokenized as the metrics read them
        from itmbench.metrics.captioning import ptb_tokenize

        by_image = train.groupby("image_id")["text"].apply(lambda t: [ptb_tokenize(x) for x in t.astype(str)])
        references = [by_image[int(i)] for i in train_ids]
    records = []
    for system in options.systems:
        model = train_captioner(
            system,
            train_f,
            np.searchsorted(train_ids, train["image_id"].to_numpy(np.int64)),
            train["text"].astype(str).tolist(),
            tokenizer,
            options,
        )
        for training in TRAININGS if options.scst_epochs else TRAININGS[:1]:
            if training == "self-critical":
                model = self_critical(model, train_f, references, tokenizer, options)
            generated = pd.DataFrame(
                {"image_id": held_ids, "caption": greedy_captions(model, held_f, tokenizer, options.max_len)}
            )
            cells = captioning.metric_cells(
                generated, held, list(metrics), score["n_boot"], score["seed"], score["confidence"],
                f"{tower} {system}'s captions",
            )  # fmt: skip
            for metric, (value, lo, hi) in cells.items():
                records.append((tower, training, system, metric, value, lo, hi, len(held_ids)))
            s_true = log_likelihoods(model, pair_f[rows_true], query, tokenizer)
            s_false = log_likelihoods(model, pair_f[rows_false], query, tokenizer)
            frame = score_frame(annotations, s_true, s_false)
            entry = summarize(frame, score["n_boot"], score["seed"], score["confidence"])["metrics"]["bison"]
            records.append((tower, training, system, "bison", entry["value"], entry["lo"], entry["hi"], entry["n"]))
            log.info("%s %s (%s): %s", tower, system, training,
                     {m: round(v[0], 2) for m, v in cells.items()} | {"bison": round(entry["value"], 2)})  # fmt: skip
    return pd.DataFrame(records, columns=list(CELL_COLUMNS))


def table6_long(cells: pd.DataFrame, published: Mapping[str, pd.DataFrame], rows: Mapping[str, str]) -> pd.DataFrame:
    """BISON Table 6: the printed systems and beneath them each world system on each tower's features, by training
    as the paper's blocks (`cells`: `tower_cells`' frames, in order), Table 4's columns."""
    records = captioning.printed_records(published)
    towers = list(dict.fromkeys(cells["tower"]))
    for training, tower in ((t, w) for t in TRAININGS for w in towers):  # the paper's blocks: loss, then features
        frame = cells[(cells["training"] == training) & (cells["tower"] == tower)]
        for system, part in frame.groupby("system", sort=False):
            label = f"world, {training}, {rows.get(tower, tower)} features: {SYSTEMS[system]}"
            by = part.set_index("metric")
            for column, metric in {**captioning.TABLE4_COLUMNS, "BISON": "bison"}.items():
                value, lo, hi = by.loc[metric, ["value", "lo", "hi"]] if metric in by.index else (np.nan,) * 3
                records.append((label, column, float(value), float(lo), float(hi), "world", tower))
    return pd.DataFrame(records, columns=["row", "column", "value", "lo", "hi", "block", "source"])
