"""MCIC-COCO (Ding et al., Dual Machine Comprehension) built in the world by Algorithm 1 (MC-IC).

Instance: one image and 5 captions, its true caption and 4 decoys; a model picks one (chance 20%).
Every caption of every image of a split is a candidate ground truth (the paper splits an image
with several captions into one instance per caption), so an image gives up to 5 instances.

Construction, per benchmark split (`dev` = the world's val split, `test` = its test split):
1. PV: a PV-DBOW model (gensim Doc2Vec, dm=0) trained on the captions of the world's train split;
   every caption that takes part (targets and the decoy pool) gets an inferred vector, so all
   vectors come from the same procedure.
2. OPTIMIZE-SCORE (`itmbench.papers.mcic.optimize_score`, which states its decisions): lambda is
   the value of `lambda_grid` with the least wmgs-rank on the captions of `lambda_search_split`
   (the paper's dev set: the world's val split), over the same decoy pool and N; it is chosen once
   and used for every split (the `lambda_search` table, and the stage `score_lambda` per split).
3. For each target caption c, its N nearest captions c' of OTHER images in the decoy pool by PV
   cosine (ties by caption id).
4. Score(c', c) = 0 if BLEU(c', c) >= L, else lambda * cos_PV(c', c) + (1 - lambda) * BLEU(c', c);
   candidates with a positive score are kept.
5. A caption with at least 4 kept candidates becomes an instance with the top 4 as decoys; the
   others are dropped (the `construction` table counts the survivors of every stage).
6. The 5 options are ordered: alphabetically, as the released files are (so the answer position is
   not uniform: the `answer_positions` table), or shuffled with a seed.

Decisions where the paper is silent (each a config field; default in brackets):
- BLEU (`bleu_order` [4], `bleu_smoothing` ['add_one']): BLEU-N of the candidate c' against the single
  reference c, whitespace tokens, brevity penalty 1 (as the paper says), geometric mean of the clipped
  n-gram precisions p_1..p_N. 'add_one' is Lin & Och (2004) / Chen & Cherry method 2, sacrebleu's
  'add-k' with k=1: p_n = (m_n + 1) / (l_n + 1) for n >= 2, p_1 unsmoothed (world captions are 2-15
  words, so unsmoothed BLEU-4 would be 0 for most short pairs). 'none': BLEU is 0 when any p_n is 0.
- PV (`pv_grid` [vector_size 32/64 x epochs 40/80], `pv_min_count` [1], `pv_loss` ['hs'], `pv_seed` [0]):
  the paper's dim 1024 / 5 epochs came from its OPTIMIZE-PV grid search (least mgs-rank) on 0.4M COCO
  captions. Here OPTIMIZE-PV is rule `mcic_optimize_pv` (`itmbench.papers.mcic.optimize_pv`, which states
  its decisions): it searches `pv_grid` on `pv_search_split` (the world's val split) and writes the
  chosen point, which the build takes (`pv_choice`) and records in the `construction` table
  (`pv_vector_size`, `pv_epochs`); the search's table is results/<source>/tables/mcic/pv_search.*.
  A grid of one point needs no search.
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

The tables it makes are those of `itmbench.papers.mcic.canonical`.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from itmbench.errors import InputError
from itmbench.papers.mcic.canonical import _DTYPES, TABLE_COLUMNS, items_of
from itmbench.papers.mcic.config import BLEU_SMOOTHINGS, N_OPTIONS, MCICConfig, grid_points
from itmbench.papers.mcic.optimize_score import LAMBDA_SEARCH_COLUMNS, Neighbourhoods, optimize_score
from itmbench.scoring.retrieval import first_k_best
from itmbench.world.generate import World

if TYPE_CHECKING:
    import scipy.sparse as sp


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


def train_pv(texts: Sequence[str], cfg: MCICConfig, point: tuple[int, int] | None = None) -> Any:
    """Train the PV-DBOW model (gensim Doc2Vec, dm=0) on these captions, deterministically, at this
    (vector_size, epochs) point (None: `pv_grid`'s only point)."""
    from gensim.models.doc2vec import Doc2Vec, TaggedDocument

    if point is None:
        point = pv_point_of(None, cfg)
    if not texts:
        raise ValueError(f"mcic: no captions in split {cfg.pv_train_split!r} to train the PV model on")
    docs = [TaggedDocument(t.split(), [i]) for i, t in enumerate(texts)]
    hs = cfg.pv_loss == "hs"
    return Doc2Vec(
        docs,
        dm=0,
        vector_size=int(point[0]),
        epochs=int(point[1]),
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


def positions_in_order(cos: np.ndarray, own: int, members: np.ndarray) -> np.ndarray:
    """0-based positions of the columns `members` in a row's order (cosine descending, ties by column),
    the column `own` left out: what `np.argsort(-cos, kind="stable")` would give, with no sort."""
    c = cos[members][:, None]
    cols = np.arange(cos.size)
    before = (cos[None, :] > c) | ((cos[None, :] == c) & (cols[None, :] < members[:, None]))
    own_before = (cos[own] > c[:, 0]) | ((cos[own] == c[:, 0]) & (own < members))
    return before.sum(axis=1) - own_before


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
    score_lambda: float,
    chunk: int = 512,
) -> tuple[list[list[tuple[int, float, float, float]]], dict[str, float]]:
    """Per target caption: its ranked decoys (pool row, score, bleu, cos), and stage counts."""
    pool_image = pool["image_id"].to_numpy()
    pool_text = pool["text"].to_numpy()
    pool_ids = pool["caption_id"].to_numpy()
    target_image = targets["image_id"].to_numpy()
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
        for r in range(stop - start):
            own = target_rows[start + r]
            co = np.flatnonzero(same_image[r])
            co = co[co != own]
            if co.size:
                mgs_ranks.append(float(positions_in_order(cos[r], own, co).mean() + 1))
        chunk_neighbours = first_k_best(cos, k, same_image)
        sizes = [nb.size for nb in chunk_neighbours]
        flat = np.concatenate(chunk_neighbours) if chunk_neighbours else np.zeros(0, np.int64)
        refs = np.repeat(target_rows[start:stop], sizes)
        flat_bleu = grams.bleu(flat, refs, cfg.bleu_smoothing)
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        for r, neighbours in enumerate(chunk_neighbours):
            bleu = flat_bleu[offsets[r] : offsets[r + 1]]
            cand_cos = cos[r, neighbours]
            too_similar = bleu >= cfg.bleu_threshold
            score = np.where(too_similar, 0.0, score_lambda * cand_cos + (1 - score_lambda) * bleu)
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


def search_neighbourhoods(
    targets: pd.DataFrame,
    pool: pd.DataFrame,
    target_vecs: np.ndarray,
    pool_vecs: np.ndarray,
    grams: NgramCounts,
    target_rows: np.ndarray,
    cfg: MCICConfig,
    chunk: int = 512,
) -> Neighbourhoods:
    """OPTIMIZE-SCORE's inputs: each target's N-best PV neighbours (itself excluded, co-captions kept).

    Ties in cosine are broken by pool order (caption id)."""
    pool_image = pool["image_id"].to_numpy()
    pool_ids = pool["caption_id"].to_numpy()
    target_image = targets["image_id"].to_numpy()
    target_ids = targets["caption_id"].to_numpy()
    k = min(cfg.neighbourhood, len(pool) - 1)
    cos_out = np.zeros((len(targets), k), dtype=np.float64)
    bleu_out = np.zeros((len(targets), k), dtype=np.float64)
    same_out = np.zeros((len(targets), k), dtype=bool)
    for start in range(0, len(targets), chunk):
        stop = min(start + chunk, len(targets))
        cos = target_vecs[start:stop] @ pool_vecs.T
        itself = pool_ids[None, :] == target_ids[start:stop, None]
        neighbours = np.stack(first_k_best(cos, k, itself)) if stop > start else np.zeros((0, k), np.int64)
        refs = np.repeat(target_rows[start:stop], k)
        bleu_out[start:stop] = grams.bleu(neighbours.ravel(), refs, cfg.bleu_smoothing).reshape(-1, k)
        cos_out[start:stop] = np.take_along_axis(cos, neighbours, axis=1)
        same_out[start:stop] = pool_image[neighbours] == target_image[start:stop, None]
    return Neighbourhoods(cos_out, bleu_out, same_out)


def _order_options(texts: list[str], ids: list[int], answer_id: int, cfg: MCICConfig) -> list[int]:
    """Permutation of the 5 options (answer first on input): alphabetical or seeded shuffle."""
    if cfg.option_order == "alphabetical":
        return sorted(range(len(texts)), key=lambda j: (texts[j], ids[j]))
    rng = np.random.default_rng([cfg.order_seed, int(answer_id)])
    return [int(j) for j in rng.permutation(len(texts))]


def pv_point_of(choice: Mapping[str, Any] | None, cfg: MCICConfig) -> tuple[int, int]:
    """The PV point the build uses: OPTIMIZE-PV's choice (checked against `pv_grid`), or the grid's only point."""
    if choice is None:
        point = cfg.single_pv_point()
        if point is None:
            raise InputError(
                f"mcic build: params mcic.pv_grid {cfg.pv_grid} has several points and no OPTIMIZE-PV choice was given "
                "(rule mcic_optimize_pv; build-benchmark --input pv_choice=JSON)"
            )
        return point
    try:
        point = (int(choice["vector_size"]), int(choice["epochs"]))
    except (KeyError, TypeError, ValueError) as e:
        raise InputError(
            f"mcic pv_choice {dict(choice)}: no integer {e}; expected OPTIMIZE-PV's vector_size and epochs"
        ) from e
    if point not in grid_points(cfg):
        raise InputError(
            f"mcic pv_choice {point}: not a point of params mcic.pv_grid {cfg.pv_grid}; expected the choice of "
            "OPTIMIZE-PV on the same grid (rerun rule mcic_optimize_pv)"
        )
    return point


def pv_split_captions(world: World, split: str) -> pd.DataFrame:
    """A world split's captions in caption-id order (the PV training and search order)."""
    caps = world.caption_table
    return caps.loc[caps["split"] == split].sort_values("caption_id", kind="stable")


def build(world: World, cfg: MCICConfig, pv_choice: Mapping[str, Any] | None = None) -> dict[str, pd.DataFrame]:
    """MCIC tables of the world by Algorithm 1: examples, decoys, construction, answer_positions, lambda_search,
    items. `pv_choice`: OPTIMIZE-PV's chosen point ({vector_size, epochs}; None: `pv_grid`'s only point)."""
    caps = world.caption_table
    pv_point = pv_point_of(pv_choice, cfg)
    model = train_pv(pv_split_captions(world, cfg.pv_train_split)["text"].tolist(), cfg, pv_point)
    all_rows = caps.sort_values("caption_id", kind="stable").reset_index(drop=True)
    all_rows = all_rows.assign(k=_caption_index(all_rows))

    pools: dict[str, tuple[pd.DataFrame, np.ndarray, NgramCounts]] = {}

    def split_inputs(world_split: str, role: str) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray, np.ndarray, Any]:
        """A world split's captions, its decoy pool with PV vectors and n-grams, and the captions' pool rows."""
        targets = all_rows[all_rows["split"] == world_split].reset_index(drop=True)
        if targets.empty:
            raise ValueError(f"mcic: the world has no captions in split {world_split!r} ({role})")
        key = world_split if cfg.decoy_pool == "split" else "all"
        if key not in pools:
            pool = targets if cfg.decoy_pool == "split" else all_rows
            grams = NgramCounts([t.split() for t in pool["text"]], cfg.bleu_order)
            pools[key] = (pool, infer_pv(model, pool["text"].tolist()), grams)
        pool, pool_vecs, grams = pools[key]
        pool_row_of = {int(c): i for i, c in enumerate(pool["caption_id"])}
        target_rows = np.array([pool_row_of[int(c)] for c in targets["caption_id"]], dtype=np.int64)
        return targets, pool, pool_vecs, target_rows, grams

    # OPTIMIZE-SCORE: lambda by least wmgs-rank on the search split (the paper's dev set)
    s_targets, s_pool, s_vecs, s_rows, s_grams = split_inputs(cfg.lambda_search_split, "lambda_search_split")
    nb = search_neighbourhoods(s_targets, s_pool, s_vecs[s_rows], s_vecs, s_grams, s_rows, cfg)
    score_lambda, lambda_search = optimize_score(nb, cfg.lambda_grid, cfg.bleu_threshold)

    examples, decoys, construction, positions = [], [], [], []
    for split, world_split in cfg.splits.items():
        targets, pool, pool_vecs, target_rows, grams = split_inputs(world_split, f"benchmark split {split!r}")
        target_vecs = pool_vecs[target_rows]
        chosen, stats = _select_decoys(targets, pool, target_vecs, pool_vecs, grams, target_rows, cfg, score_lambda)

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
            "score_lambda": score_lambda,
            "pv_vector_size": float(pv_point[0]),
            "pv_epochs": float(pv_point[1]),
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
        "lambda_search": lambda_search[LAMBDA_SEARCH_COLUMNS],
    }
    tables["items"] = items_of(tables["examples"])
    return tables


def _typed(df: pd.DataFrame, name: str) -> pd.DataFrame:
    return df.astype(_DTYPES[name])
