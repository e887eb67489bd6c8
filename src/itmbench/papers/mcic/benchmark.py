"""MCIC-COCO (Ding et al., Dual Machine Comprehension) built in the world by Algorithm 1 (MC-IC).

Instance: one image and 5 captions, its true caption and 4 decoys; a model picks one (chance 20%).
Every caption of every image of a split is a candidate ground truth (the paper splits an image
with several captions into one instance per caption), so an image gives up to 5 instances.

Construction, per benchmark split (`dev` = the world's val split, `test` = its test split):
1. PV: a PV-DBOW model (gensim Doc2Vec, dm=0) trained on the captions of the world's train split;
   every caption that takes part (targets and the decoy pool) gets an inferred vector, so all
   vectors come from the same procedure.
2. For each target caption c, its N nearest captions c' of OTHER images in the decoy pool by PV
   cosine (ties by caption id).
3. Score(c', c) = 0 if BLEU(c', c) >= L, else lambda * cos_PV(c', c) + (1 - lambda) * BLEU(c', c);
   candidates with a positive score are kept.
4. A caption with at least 4 kept candidates becomes an instance with the top 4 as decoys; the
   others are dropped (the `construction` table counts the survivors of every stage).
5. The 5 options are ordered: alphabetically, as the released files are (so the answer position is
   not uniform: the `answer_positions` table), or shuffled with a seed.

Decisions where the paper is silent (each a config field; default in brackets):
- BLEU (`bleu_order` [4], `bleu_smoothing` ['add_one']): BLEU-N of the candidate c' against the single
  reference c, whitespace tokens, brevity penalty 1 (as the paper says), geometric mean of the clipped
  n-gram precisions p_1..p_N. 'add_one' is Lin & Och (2004) / Chen & Cherry method 2, sacrebleu's
  'add-k' with k=1: p_n = (m_n + 1) / (l_n + 1) for n >= 2, p_1 unsmoothed (world captions are 2-15
  words, so unsmoothed BLEU-4 would be 0 for most short pairs). 'none': BLEU is 0 when any p_n is 0.
- PV (`pv_vector_size` [64], `pv_epochs` [80], `pv_min_count` [1], `pv_loss` ['hs'], `pv_seed` [0]):
  the paper's dim 1024 / 5 epochs came from its OPTIMIZE-PV grid search (least mgs-rank: the mean
  rank of an image's other captions among a caption's PV neighbours) on 0.4M COCO captions. The same
  search on the default world's val split (1,250 captions; random ~625) gave, for dim 32/64/128 x
  epochs 5/20/40: 615/610/610, 524/531/533, 392/393/412, and for dim 32/64 x epochs 80/160:
  318/315, 315/313; 64 x 80 is within 1% of the least at half the cost of 160 epochs.
  'hs' (hierarchical softmax, no negative sampling)
  stands for the paper's "softmax loss". workers=1 and a crc32-seeded initial vector for inference
  make the vectors independent of PYTHONHASHSEED (gensim's own infer_vector seeds with hash()).
- N (`neighbourhood` [100]): the paper's 500 of ~0.6M captions; the world's dev split has ~1,250
  captions, so 100 keeps the candidates a small, PV-close part of the pool.
- Decoy pool (`decoy_pool` ['split']): 'split' takes decoys from the other images of the same split,
  so a benchmark split is self-contained (image- and caption-disjoint from train); 'all' takes them
  from every split of the world, closer to the paper, which ran Algorithm 1 on all of COCO.
- Duplicate decoy texts (`dedupe_decoy_text` [true]): two candidates with the same text would be
  indistinguishable options, so only the best-scoring one of each text is kept before counting 4.
- Ties in the score are broken by caption id; option order 'alphabetical' breaks text ties by
  caption id; 'shuffled' draws one permutation per instance from (order_seed, caption id).
- `example_id` is '<image id>_<k>' with k the caption's index among its image's captions; `image`
  is the COCO-style name '<image id, 12 digits>.jpg' (a key: the pixels are in the world's items).

Audit (world only): decoys that fit the image by the world's truth (share of decoys, share of
instances with at least one), the truth oracle (uniform among fitting options), simulated raters
(each answers uniformly among the options that fit the image by truth, or with probability
`rater_noise` uniformly among all 5; `n_raters` [3] per instance, majority = at least half correct,
the paper's "at least 2 of 3") beside the paper's Table 2 (81.1 / 67.3 / 82.8 / 93.1), and the
answer-position prior (accuracy of always answering each position; 22.7% for position 3 on dev).
`relation_margin` and `max_objects` must equal the world's (they define truth).

Canonical table `examples`: the columns of `itmbench.papers.mcic.released` (split, example_id, image,
image_id, options, answer_index, answer, line) plus world columns caption_id (the true caption) and
option_caption_ids (the 5 options' caption ids, in option order), world_split.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from itmbench.io import write_parquet
from itmbench.metrics.accuracy import constant_answer_accuracy, mcic_accuracy, multiple_choice_correct
from itmbench.metrics.intervals import bootstrap_interval, wilson_interval
from itmbench.papers.mcic.config import BLEU_SMOOTHINGS, N_OPTIONS, MCICConfig
from itmbench.scoring.pairs import PairScores, pair_frame
from itmbench.world.captions import CaptionStructure
from itmbench.world.generate import World
from itmbench.world.scene import Scene
from itmbench.world.truth import truth_matrix

if TYPE_CHECKING:
    import scipy.sparse as sp

    from itmbench.scoring.embed import EmbeddingCache

# The paper's published reference values (Table 2 and the released dev file's answer prior), in %.
PAPER_HUMAN = {"one_rater": 81.1, "all_correct": 67.3, "majority": 82.8, "at_least_one": 93.1}
PAPER_PRIOR_POSITION_3 = 22.7

TABLE_COLUMNS: dict[str, list[str]] = {
    "examples": [
        "split",
        "example_id",
        "image",
        "image_id",
        "options",
        "answer_index",
        "answer",
        "line",
        "caption_id",
        "option_caption_ids",
        "world_split",
    ],
    "decoys": [
        "split",
        "example_id",
        "rank",
        "position",
        "caption_id",
        "image_id",
        "text",
        "score",
        "bleu",
        "cos_pv",
    ],
    "construction": ["split", "stage", "value"],
    "answer_positions": ["split", "position", "n", "share"],
    "items": ["kind", "item_id"],
}
SCORE_COLUMNS = [f"score_{j}" for j in range(N_OPTIONS)]
# Tables (and examples columns) that only the world's construction has: absent when the benchmark
# comes from the released files (the coco source); score_dual and summarize never need them.
CONSTRUCTION_TABLES = ("decoys", "construction")
WORLD_ONLY_COLUMNS = ("world_split",)


# ---------------------------------------------------------------------------------------------
# BLEU with brevity penalty 1: a naive reference and a vectorised form over many pairs.


def sentence_bleu(
    candidate: Sequence[str], reference: Sequence[str], order: int = 4, smoothing: str = "add_one"
) -> float:
    """BLEU of one candidate against one reference, brevity penalty 1 (naive reference form)."""
    if smoothing not in BLEU_SMOOTHINGS:
        raise ValueError(f"unknown BLEU smoothing {smoothing!r}; expected one of {BLEU_SMOOTHINGS}")
    log_sum = 0.0
    for n in range(1, order + 1):
        cand = [tuple(candidate[i : i + n]) for i in range(len(candidate) - n + 1)]
        ref = [tuple(reference[i : i + n]) for i in range(len(reference) - n + 1)]
        ref_counts: dict[tuple[str, ...], int] = {}
        for g in ref:
            ref_counts[g] = ref_counts.get(g, 0) + 1
        cand_counts: dict[tuple[str, ...], int] = {}
        for g in cand:
            cand_counts[g] = cand_counts.get(g, 0) + 1
        matches = sum(min(c, ref_counts.get(g, 0)) for g, c in cand_counts.items())
        total = len(cand)
        add = 1 if (smoothing == "add_one" and n > 1) else 0
        if matches + add == 0:
            return 0.0
        log_sum += np.log((matches + add) / (total + add))
    return float(np.exp(log_sum / order))


class NgramCounts:
    """Sparse n-gram count matrices of a list of token lists, for BLEU over many pairs at once."""

    def __init__(self, token_lists: Sequence[Sequence[str]], order: int) -> None:
        import scipy.sparse as sp

        self.order = order
        self.lengths = np.array([len(t) for t in token_lists], dtype=np.int64)
        self.counts: list[sp.csr_matrix] = []
        for n in range(1, order + 1):
            vocab: dict[tuple[str, ...], int] = {}
            rows, cols = [], []
            for r, tokens in enumerate(token_lists):
                for i in range(len(tokens) - n + 1):
                    rows.append(r)
                    cols.append(vocab.setdefault(tuple(tokens[i : i + n]), len(vocab)))
            data = np.ones(len(rows), dtype=np.float64)
            m = sp.csr_matrix((data, (rows, cols)), shape=(len(token_lists), max(len(vocab), 1)))
            m.sum_duplicates()
            self.counts.append(m)

    def bleu(self, candidate: np.ndarray, reference: np.ndarray, smoothing: str = "add_one") -> np.ndarray:
        """BLEU(candidate[i], reference[i]) for each pair of row indices, brevity penalty 1."""
        if smoothing not in BLEU_SMOOTHINGS:
            raise ValueError(f"unknown BLEU smoothing {smoothing!r}; expected one of {BLEU_SMOOTHINGS}")
        candidate = np.asarray(candidate, dtype=np.int64)
        reference = np.asarray(reference, dtype=np.int64)
        log_sum = np.zeros(candidate.size, dtype=np.float64)
        zero = np.zeros(candidate.size, dtype=bool)
        for n, m in enumerate(self.counts, start=1):
            matches = np.asarray(m[candidate].minimum(m[reference]).sum(axis=1)).ravel()
            total = np.maximum(self.lengths[candidate] - n + 1, 0).astype(np.float64)
            add = 1.0 if (smoothing == "add_one" and n > 1) else 0.0
            num = matches + add
            zero |= num == 0
            with np.errstate(divide="ignore", invalid="ignore"):
                log_sum += np.where(num > 0, np.log(np.where(num > 0, num, 1.0) / np.maximum(total + add, 1.0)), 0.0)
        out = np.exp(log_sum / self.order)
        out[zero] = 0.0
        return out


# ---------------------------------------------------------------------------------------------
# Paragraph vectors (PV-DBOW).


def train_pv(texts: Sequence[str], cfg: MCICConfig) -> Any:
    """Train the PV-DBOW model (gensim Doc2Vec, dm=0) on these captions, deterministically."""
    from gensim.models.doc2vec import Doc2Vec, TaggedDocument

    if not texts:
        raise ValueError(f"mcic: no captions in split {cfg.pv_train_split!r} to train the PV model on")
    docs = [TaggedDocument(t.split(), [i]) for i, t in enumerate(texts)]
    hs = cfg.pv_loss == "hs"
    return Doc2Vec(
        docs,
        dm=0,
        vector_size=cfg.pv_vector_size,
        epochs=cfg.pv_epochs,
        min_count=cfg.pv_min_count,
        hs=1 if hs else 0,
        negative=0 if hs else 5,
        workers=1,
        seed=cfg.pv_seed,
    )


def infer_pv(model: Any, texts: Sequence[str]) -> np.ndarray:
    """Unit-norm PV vectors [n, D] (float64) inferred for these captions, independent of PYTHONHASHSEED."""
    from gensim.models.doc2vec_inner import train_document_dbow
    from gensim.models.keyedvectors import pseudorandom_weak_vector

    size = model.dv.vector_size
    out = np.zeros((len(texts), size), dtype=np.float64)
    work = np.zeros(model.layer1_size, dtype=np.float32)
    lockf = np.ones(1, dtype=np.float32)
    step = (model.alpha - model.min_alpha) / max(model.epochs - 1, 1)
    for r, text in enumerate(texts):
        words = text.split()
        vec = pseudorandom_weak_vector(size, seed_string=text, hashfxn=_crc32).reshape(1, size)
        alpha = model.alpha
        for _ in range(model.epochs):  # gensim's infer_vector loop, with a crc32-seeded start
            train_document_dbow(
                model, words, [0], alpha, work, learn_words=False, learn_hidden=False, doctag_vectors=vec,
                doctags_lockf=lockf,
            )  # fmt: skip
            alpha -= step
        out[r] = vec[0]
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.where(norms > 0, norms, 1.0)


def _crc32(text: str) -> int:
    return zlib.crc32(text.encode("utf-8"))


# ---------------------------------------------------------------------------------------------
# Construction (Algorithm 1).


def _caption_index(caps: pd.DataFrame) -> np.ndarray:
    """k of each caption among its image's captions (caption-id order)."""
    return caps.groupby("image_id", sort=False)["caption_id"].rank(method="first").to_numpy(dtype=np.int64) - 1


def _select_decoys(
    targets: pd.DataFrame,
    pool: pd.DataFrame,
    target_vecs: np.ndarray,
    pool_vecs: np.ndarray,
    grams: NgramCounts,
    target_rows: np.ndarray,
    cfg: MCICConfig,
    chunk: int = 512,
) -> tuple[list[list[tuple[int, float, float, float]]], dict[str, float]]:
    """Per target caption: its ranked decoys (pool row, score, bleu, cos), and stage counts."""
    pool_image = pool["image_id"].to_numpy()
    pool_text = pool["text"].to_numpy()
    pool_ids = pool["caption_id"].to_numpy()
    target_image = targets["image_id"].to_numpy()
    target_ids = targets["caption_id"].to_numpy()
    n_pool = len(pool)
    k = min(cfg.neighbourhood, n_pool)
    out: list[list[tuple[int, float, float, float]]] = []
    stats = {"candidates": 0.0, "candidates_bleu_at_least_L": 0.0, "candidates_positive_score": 0.0}
    mgs_ranks: list[float] = []
    for start in range(0, len(targets), chunk):
        stop = min(start + chunk, len(targets))
        cos = target_vecs[start:stop] @ pool_vecs.T
        same_image = target_image[start:stop, None] == pool_image[None, :]
        # rank by cosine, ties by pool position (caption id order); itself excluded from the mgs-rank
        order = np.argsort(-cos, axis=1, kind="stable")
        chunk_neighbours = []
        for r in range(stop - start):
            row_order = order[r]
            own = row_order[pool_ids[row_order] != target_ids[start + r]]
            co = np.flatnonzero(same_image[r][own])
            if co.size:
                mgs_ranks.append(float(co.mean() + 1))
            chunk_neighbours.append(row_order[~same_image[r][row_order]][:k])
        sizes = [nb.size for nb in chunk_neighbours]
        flat = np.concatenate(chunk_neighbours) if chunk_neighbours else np.zeros(0, np.int64)
        refs = np.repeat(target_rows[start:stop], sizes)
        flat_bleu = grams.bleu(flat, refs, cfg.bleu_smoothing)
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        for r, neighbours in enumerate(chunk_neighbours):
            bleu = flat_bleu[offsets[r] : offsets[r + 1]]
            cand_cos = cos[r, neighbours]
            too_similar = bleu >= cfg.bleu_threshold
            score = np.where(too_similar, 0.0, cfg.score_lambda * cand_cos + (1 - cfg.score_lambda) * bleu)
            keep = score > 0
            stats["candidates"] += neighbours.size
            stats["candidates_bleu_at_least_L"] += float(too_similar.sum())
            stats["candidates_positive_score"] += float(keep.sum())
            sel = np.flatnonzero(keep)
            sel = sel[np.lexsort((pool_ids[neighbours[sel]], -score[sel]))]
            chosen: list[tuple[int, float, float, float]] = []
            seen: set[str] = set()
            for s in sel:
                p = int(neighbours[s])
                if cfg.dedupe_decoy_text:
                    if pool_text[p] in seen:
                        continue
                    seen.add(pool_text[p])
                chosen.append((p, float(score[s]), float(bleu[s]), float(cand_cos[s])))
            out.append(chosen)
    stats["pv_mgs_rank"] = float(np.mean(mgs_ranks)) if mgs_ranks else float("nan")
    return out, stats


def _order_options(texts: list[str], ids: list[int], answer_id: int, cfg: MCICConfig) -> list[int]:
    """Permutation of the 5 options (answer first on input): alphabetical or seeded shuffle."""
    if cfg.option_order == "alphabetical":
        return sorted(range(len(texts)), key=lambda j: (texts[j], ids[j]))
    rng = np.random.default_rng([cfg.order_seed, int(answer_id)])
    return [int(j) for j in rng.permutation(len(texts))]


def build(world: World, cfg: MCICConfig, **inputs: Any) -> dict[str, pd.DataFrame]:
    """MCIC tables of the world by Algorithm 1: examples, decoys, construction, answer_positions, items."""
    if inputs:
        raise ValueError(f"mcic build: unexpected inputs {sorted(inputs)}; it needs only the world")
    caps = world.caption_table
    pv_texts = caps.loc[caps["split"] == cfg.pv_train_split].sort_values("caption_id", kind="stable")["text"]
    model = train_pv(pv_texts.tolist(), cfg)
    all_rows = caps.sort_values("caption_id", kind="stable").reset_index(drop=True)
    all_rows = all_rows.assign(k=_caption_index(all_rows))

    examples, decoys, construction, positions = [], [], [], []
    for split, world_split in cfg.splits.items():
        targets = all_rows[all_rows["split"] == world_split].reset_index(drop=True)
        if targets.empty:
            raise ValueError(f"mcic: the world has no captions in split {world_split!r} (benchmark split {split!r})")
        pool = targets if cfg.decoy_pool == "split" else all_rows
        pool_vecs = infer_pv(model, pool["text"].tolist())
        pool_row_of = {int(c): i for i, c in enumerate(pool["caption_id"])}
        target_rows = np.array([pool_row_of[int(c)] for c in targets["caption_id"]], dtype=np.int64)
        target_vecs = pool_vecs[target_rows]
        grams = NgramCounts([t.split() for t in pool["text"]], cfg.bleu_order)
        chosen, stats = _select_decoys(targets, pool, target_vecs, pool_vecs, grams, target_rows, cfg)

        t_image = targets["image_id"].to_numpy(dtype=np.int64)
        t_ids = targets["caption_id"].to_numpy(dtype=np.int64)
        t_text = targets["text"].to_numpy(dtype=object)
        t_k = targets["k"].to_numpy(dtype=np.int64)
        p_text = pool["text"].to_numpy(dtype=object)
        p_ids = pool["caption_id"].to_numpy(dtype=np.int64)
        p_image = pool["image_id"].to_numpy(dtype=np.int64)
        ex_rows, dec_rows = [], []
        for t, picks in enumerate(chosen):
            if len(picks) < cfg.n_decoys:
                continue
            picks = picks[: cfg.n_decoys]
            image_id = int(t_image[t])
            answer_id = int(t_ids[t])
            texts = [str(t_text[t])] + [str(p_text[p]) for p, *_ in picks]
            ids = [answer_id] + [int(p_ids[p]) for p, *_ in picks]
            perm = _order_options(texts, ids, answer_id, cfg)
            position = {orig: new for new, orig in enumerate(perm)}
            example_id = f"{image_id}_{int(t_k[t])}"
            ex_rows.append(
                {
                    "split": split,
                    "example_id": example_id,
                    "image": f"{image_id:012d}.jpg",
                    "image_id": image_id,
                    "options": [texts[j] for j in perm],
                    "answer_index": position[0],
                    "answer": texts[0],
                    "line": len(ex_rows) + 1,
                    "caption_id": answer_id,
                    "option_caption_ids": [ids[j] for j in perm],
                    "world_split": world_split,
                }
            )
            for rank, (p, score, bleu, cos) in enumerate(picks, start=1):
                dec_rows.append(
                    {
                        "split": split,
                        "example_id": example_id,
                        "rank": rank,
                        "position": position[rank],
                        "caption_id": ids[rank],
                        "image_id": int(p_image[p]),
                        "text": texts[rank],
                        "score": score,
                        "bleu": bleu,
                        "cos_pv": cos,
                    }
                )
        examples.extend(ex_rows)
        decoys.extend(dec_rows)
        n_inst = len(ex_rows)
        stages = {
            "images": float(targets["image_id"].nunique()),
            "captions": float(len(targets)),
            **{k: v for k, v in stats.items() if k != "pv_mgs_rank"},
            "captions_with_a_positive_candidate": float(sum(len(c) > 0 for c in chosen)),
            "instances": float(n_inst),
            "instance_images": float(len({r["image_id"] for r in ex_rows})),
            "pv_mgs_rank": stats["pv_mgs_rank"],
        }
        construction.extend({"split": split, "stage": s, "value": v} for s, v in stages.items())
        counts = np.bincount([r["answer_index"] for r in ex_rows], minlength=N_OPTIONS)
        for j in range(N_OPTIONS):
            share = counts[j] / n_inst if n_inst else float("nan")
            positions.append({"split": split, "position": j, "n": int(counts[j]), "share": float(share)})

    tables = {
        "examples": _typed(pd.DataFrame(examples, columns=TABLE_COLUMNS["examples"]), "examples"),
        "decoys": _typed(pd.DataFrame(decoys, columns=TABLE_COLUMNS["decoys"]), "decoys"),
        "construction": _typed(pd.DataFrame(construction, columns=TABLE_COLUMNS["construction"]), "construction"),
        "answer_positions": _typed(pd.DataFrame(positions, columns=TABLE_COLUMNS["answer_positions"]), "positions"),
    }
    tables["items"] = items_of(tables["examples"])
    return tables


_DTYPES: dict[str, dict[str, str]] = {
    "examples": {
        "split": "string",
        "example_id": "string",
        "image": "string",
        "image_id": "int64",
        "answer_index": "int64",
        "answer": "string",
        "line": "int64",
        "caption_id": "int64",
        "world_split": "string",
    },
    "decoys": {
        "split": "string",
        "example_id": "string",
        "rank": "int64",
        "position": "int64",
        "caption_id": "int64",
        "image_id": "int64",
        "text": "string",
        "score": "float64",
        "bleu": "float64",
        "cos_pv": "float64",
    },
    "construction": {"split": "string", "stage": "string", "value": "float64"},
    "positions": {"split": "string", "position": "int64", "n": "int64", "share": "float64"},
}


def _typed(df: pd.DataFrame, name: str) -> pd.DataFrame:
    return df.astype(_DTYPES[name])


def items_of(examples: pd.DataFrame) -> pd.DataFrame:
    """Every item a model must embed: the instances' images and all their options' captions."""
    images = np.unique(examples["image_id"].to_numpy(dtype=np.int64))
    flat = [int(c) for ids in examples["option_caption_ids"] for c in ids]
    captions = np.unique(np.asarray(flat, dtype=np.int64))
    return pd.DataFrame(
        {
            "kind": ["caption"] * captions.size + ["image"] * images.size,
            "item_id": np.concatenate([captions, images]).astype(np.int64),
        }
    )


def write(tables: dict[str, pd.DataFrame], out_dir: str | Path) -> None:
    """Write every table as <name>.parquet atomically; items.parquet last (it marks completion)."""
    missing = [name for name in TABLE_COLUMNS if name not in tables and name not in CONSTRUCTION_TABLES]
    if missing:
        raise ValueError(f"mcic write: missing tables {missing}; expected {sorted(TABLE_COLUMNS)}")
    out = Path(out_dir)
    for name, df in tables.items():
        if name != "items":
            write_parquet(out / f"{name}.parquet", df)
    write_parquet(out / "items.parquet", tables["items"].astype({"item_id": "int64"}))


def read(out_dir: str | Path) -> dict[str, pd.DataFrame]:
    """Read the tables written by `write`, checking each file's columns (the error names the file)."""
    d = Path(out_dir)
    tables: dict[str, pd.DataFrame] = {}
    for name, cols in TABLE_COLUMNS.items():
        path = d / f"{name}.parquet"
        if name in CONSTRUCTION_TABLES and not path.exists():
            continue  # construction tables exist only for a benchmark built in the world
        if not path.exists():
            raise FileNotFoundError(f"{path}: missing; expected the MCIC table {name!r} (run the mcic build rule)")
        df = pd.read_parquet(path)
        absent = [c for c in cols if c not in df.columns and c not in WORLD_ONLY_COLUMNS]
        if absent:
            raise ValueError(f"{path}: missing columns {absent}; expected {cols}")
        tables[name] = df
    ex = tables["examples"]
    for col in ("options", "option_caption_ids"):
        ex[col] = [list(v) for v in ex[col]]
    bad = [i for i, v in enumerate(ex["options"]) if len(v) != N_OPTIONS]
    if bad:
        raise ValueError(f"{d / 'examples.parquet'}: row {bad[0]}: expected {N_OPTIONS} options")
    ex["option_caption_ids"] = [[int(c) for c in v] for v in ex["option_caption_ids"]]
    return tables


# ---------------------------------------------------------------------------------------------
# Audit: what only the world's truth can tell.


def option_fits(world: World, examples: pd.DataFrame, cfg: MCICConfig) -> np.ndarray:
    """bool [n, 5]: whether each option fits the instance's image by the world's truth."""
    n = len(examples)
    if n == 0:
        return np.zeros((0, N_OPTIONS), dtype=bool)
    option_ids = np.array([list(v) for v in examples["option_caption_ids"]], dtype=np.int64)
    uniq_caps, cap_inv = np.unique(option_ids, return_inverse=True)
    uniq_imgs, img_inv = np.unique(examples["image_id"].to_numpy(dtype=np.int64), return_inverse=True)
    structure_of = dict(zip(world.caption_table["caption_id"].to_numpy(), world.caption_table["structure"]))
    scene_of = dict(zip(world.scene_table["image_id"].to_numpy(), world.scene_table["scene"]))
    missing = [int(c) for c in uniq_caps if int(c) not in structure_of]
    if missing:
        raise KeyError(f"mcic audit: caption ids {missing[:5]} are not in the world (a table from another world?)")
    structures = [CaptionStructure.from_json(structure_of[int(c)]) for c in uniq_caps]
    scenes = [Scene.from_json(scene_of[int(i)]) for i in uniq_imgs]
    fits = truth_matrix(structures, scenes, cfg.relation_margin, cfg.max_objects)  # [caps, imgs]
    return fits[cap_inv.reshape(n, N_OPTIONS), img_inv[:, None]]


def simulate_raters(fits: np.ndarray, answer: np.ndarray, cfg: MCICConfig, stream: int) -> np.ndarray:
    """int [n, n_raters] chosen options: uniform among fitting options, or any option with prob. noise."""
    n = fits.shape[0]
    rng = np.random.default_rng([cfg.rater_seed, stream])
    lapse = rng.random((n, cfg.n_raters)) < cfg.rater_noise
    any_pick = rng.integers(0, N_OPTIONS, size=(n, cfg.n_raters))
    u = rng.random((n, cfg.n_raters))
    fit = fits.copy()
    fit[fit.sum(axis=1) == 0] = True  # nothing fits: guess among all
    n_fit = fit.sum(axis=1)
    kth = np.minimum((u * n_fit[:, None]).astype(np.int64), n_fit[:, None] - 1)  # which fitting option
    cum = np.cumsum(fit, axis=1)  # [n, 5]
    truth_pick = (cum[:, None, :] <= kth[:, :, None]).sum(axis=2)  # first j with cum[j] > kth
    return np.where(lapse, any_pick, truth_pick)


def _pct(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float, float]:
    lo, hi = wilson_interval(successes, n, confidence)
    value = 100.0 * successes / n if n else float("nan")
    return value, 100.0 * lo, 100.0 * hi


def audit(world: World, tables: dict[str, pd.DataFrame], cfg: MCICConfig) -> pd.DataFrame:
    """Long table (row, column, value, lo, hi): fitting decoys, simulated raters, answer-position prior."""
    examples = tables["examples"]
    nan = float("nan")
    rows: list[dict[str, Any]] = []

    def add(row: str, column: str, value: float, lo: float = nan, hi: float = nan) -> None:
        rows.append({"row": row, "column": column, "value": float(value), "lo": float(lo), "hi": float(hi)})

    for stream, split in enumerate(dict.fromkeys(examples["split"])):
        ex = examples[examples["split"] == split]
        n = len(ex)
        answer = ex["answer_index"].to_numpy(dtype=np.int64)
        fits = option_fits(world, ex, cfg)
        is_decoy = np.ones_like(fits)
        is_decoy[np.arange(n), answer] = False
        fitting_decoys = fits & is_decoy
        add("instances", split, n)
        add("decoys", split, int(is_decoy.sum()))
        add("decoys fitting the image (% of decoys)", split, *_pct(int(fitting_decoys.sum()), int(is_decoy.sum())))
        add("instances with a fitting decoy (%)", split, *_pct(int(fitting_decoys.any(axis=1).sum()), n))
        add("true caption fits the image (%)", split, *_pct(int(fits[np.arange(n), answer].sum()), n))
        n_fit = np.maximum(fits.sum(axis=1), 1)
        oracle = np.where(fits[np.arange(n), answer], 1.0 / n_fit, 0.0)
        lo, hi = bootstrap_interval(oracle, np.mean, seed=cfg.rater_seed) if n else (nan, nan)
        add(
            "truth oracle, uniform among fitting options (%)",
            split,
            100 * oracle.mean() if n else nan,
            100 * lo,
            100 * hi,
        )
        picks = simulate_raters(fits, answer, cfg, stream)
        correct = picks == answer[:, None]
        n_correct = correct.sum(axis=1)
        half = int(np.ceil(cfg.n_raters / 2))
        add("raters: 1-rater accuracy (%)", split, *_pct(int(correct.sum()), int(correct.size)))
        add(
            f"raters: {cfg.n_raters} of {cfg.n_raters} correct (%)",
            split,
            *_pct(int((n_correct == cfg.n_raters).sum()), n),
        )
        add(
            f"raters: majority, at least {half} of {cfg.n_raters} correct (%)",
            split,
            *_pct(int((n_correct >= half).sum()), n),
        )
        add(f"raters: at least 1 of {cfg.n_raters} correct (%)", split, *_pct(int((n_correct >= 1).sum()), n))
        for j in range(N_OPTIONS):
            add(f"always answer position {j} (%)", split, *_pct(int((answer == j).sum()), n))
    half = int(np.ceil(cfg.n_raters / 2))
    if cfg.n_raters == 3:
        add("raters: 1-rater accuracy (%)", "paper", PAPER_HUMAN["one_rater"])
        add("raters: 3 of 3 correct (%)", "paper", PAPER_HUMAN["all_correct"])
        add(f"raters: majority, at least {half} of 3 correct (%)", "paper", PAPER_HUMAN["majority"])
        add("raters: at least 1 of 3 correct (%)", "paper", PAPER_HUMAN["at_least_one"])
    add("always answer position 3 (%)", "paper", PAPER_PRIOR_POSITION_3)
    return pd.DataFrame(rows, columns=["row", "column", "value", "lo", "hi"])


# ---------------------------------------------------------------------------------------------
# Scoring and metrics.


def score_dual(tables: dict[str, pd.DataFrame], cache: EmbeddingCache) -> pd.DataFrame:
    """Per-instance dual-encoder scores s(option, image) of the 5 options, from the embedding cache."""
    ex = tables["examples"]
    n = len(ex)
    option_ids = np.array([list(v) for v in ex["option_caption_ids"]], dtype=np.int64).reshape(n, N_OPTIONS)
    image_ids = ex["image_id"].to_numpy(dtype=np.int64)
    img = cache.get("image", image_ids).astype(np.float64)
    cap = cache.get("caption", option_ids.ravel()).astype(np.float64).reshape(n, N_OPTIONS, -1)
    scores = (cap @ img[:, :, None])[:, :, 0] if n else np.zeros((0, N_OPTIONS))
    return _score_frame(ex, option_ids, scores)


def pairs_needed(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The (caption_id, image_id) pairs a cross scorer must score: each instance's image with its 5 options."""
    ex = tables["examples"]
    option_ids = np.array([list(v) for v in ex["option_caption_ids"]], dtype=np.int64).reshape(len(ex), N_OPTIONS)
    return pair_frame(option_ids.ravel(), np.repeat(ex["image_id"].to_numpy(dtype=np.int64), N_OPTIONS))


def score_pairs(tables: dict[str, pd.DataFrame], pairs: PairScores) -> pd.DataFrame:
    """The per-instance table of `score_dual`, from a cross scorer's pair scores."""
    ex = tables["examples"]
    n = len(ex)
    option_ids = np.array([list(v) for v in ex["option_caption_ids"]], dtype=np.int64).reshape(n, N_OPTIONS)
    images = np.repeat(ex["image_id"].to_numpy(dtype=np.int64), N_OPTIONS)
    return _score_frame(ex, option_ids, pairs.get(option_ids.ravel(), images).reshape(n, N_OPTIONS))


def _score_frame(ex: pd.DataFrame, option_ids: np.ndarray, scores: np.ndarray) -> pd.DataFrame:
    """One row per instance: its options' scores, the argmax and whether it is the answer."""
    n = len(ex)
    image_ids = ex["image_id"].to_numpy(dtype=np.int64)
    answer = ex["answer_index"].to_numpy(dtype=np.int64)
    out = pd.DataFrame(
        {
            "split": ex["split"].astype("string").to_numpy(),
            "example_id": ex["example_id"].astype("string").to_numpy(),
            "image_id": image_ids,
            "answer_index": answer,
        }
    )
    for j in range(N_OPTIONS):
        out[f"caption_id_{j}"] = option_ids[:, j]
    for j in range(N_OPTIONS):
        out[f"score_{j}"] = scores[:, j].astype(np.float64)
    out["predicted"] = np.argmax(scores, axis=1).astype(np.int64) if n else np.zeros(0, np.int64)
    out["correct"] = multiple_choice_correct(scores, answer) if n else np.zeros(0, bool)
    return out


def summarize(scores: pd.DataFrame, n_boot: int = 1000, seed: int = 0, confidence: float = 0.95) -> dict:
    """Accuracy (%) per split with Wilson interval and the paper's '±' (binomial SE), plus the priors.

    The intervals are binomial (Wilson), so n_boot and seed are unused; they keep the shared signature.
    """
    missing = [c for c in ["split", "answer_index", *SCORE_COLUMNS] if c not in scores.columns]
    if missing:
        raise ValueError(f"mcic summarize: scores lack columns {missing}")
    metrics: dict[str, dict[str, float]] = {}
    se: dict[str, float] = {}
    prior: dict[str, list[float]] = {}
    predicted: dict[str, list[float]] = {}
    ties: dict[str, int] = {}
    for split in dict.fromkeys(scores["split"]):
        part = scores[scores["split"] == split]
        s = part[SCORE_COLUMNS].to_numpy(dtype=np.float64)
        answer = part["answer_index"].to_numpy(dtype=np.int64)
        acc = mcic_accuracy(s, answer, confidence)
        lo, hi = acc.ci_percent
        metrics[f"accuracy_{split}"] = {"value": acc.percent, "lo": lo, "hi": hi, "n": acc.n}
        se[f"accuracy_{split}"] = acc.standard_error_percent
        prior[split] = [100.0 * float(v) for v in constant_answer_accuracy(answer, N_OPTIONS)]
        pred = np.argmax(s, axis=1)
        predicted[split] = [100.0 * float(v) for v in constant_answer_accuracy(pred, N_OPTIONS)]
        true = s[np.arange(len(s)), answer]
        others = s.copy()
        others[np.arange(len(s)), answer] = -np.inf
        ties[split] = int((true == others.max(axis=1)).sum()) if len(s) else 0
    return {
        "metrics": metrics,
        "standard_error": se,
        "chance": 100.0 / N_OPTIONS,
        "answer_position_prior": prior,
        "predicted_position_share": predicted,
        "ties_counted_wrong": ties,
        "confidence": confidence,
    }
