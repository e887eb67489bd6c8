"""BiVLC (Miranda et al.) with its SugarCrepe half, built in the world by the paper's procedure.

Canonical tables (the same columns as the released files, `itmbench.papers.bivlc.released` and
`itmbench.papers.sugarcrepe.released`, plus world-only columns):
- `sugarcrepe`: id, subset, type, subtype, filename, image_id, caption, negative_caption, then
  caption_id, negative_caption_id, negative_structure, edit, chosen_candidate (-1: none chosen
  in step 3), judged_ambiguous (step 4), in_bivlc, bivlc_id (-1 where not in BiVLC);
- `instances` (BiVLC): id, image, caption, negative_caption, negative_image, type, subtype, then
  caption_id, negative_caption_id, sugarcrepe_id. In the world `image` and `negative_image` hold
  image ids (int64).
Construction-stage tables: `edits` (every proposed hard-negative caption and whether it was true
of its image), `candidates` (every generated image: its scene graph, mistakes, truth of both
captions, whether step 3 chose it), `stages` (survivors per stage and subset), and the new items
`extra_images` (image_id, split, n_objects, scene, image_size, pixels) and `extra_captions`
(caption_id, image_id, split, text, structure), written as an items folder `extra_items/` with the
layout of the world's. `items` lists every item a model must embed.

Construction on `split` (the test split):
0. SugarCrepe: for each image and subset, its captions are tried in a random order; each gets one
   edit of that subset (`negatives.captions`), realised as a minimal text edit; an edit still
   true of the image by the world's truth is rejected (SugarCrepe's filter of false negatives)
   and the next caption is tried, until `instances_per_image_subset` are kept.
1. Formatting (paper's step 1) is a no-op: positive and negative texts come from one grammar.
2. `n_candidates` images per negative caption from an `ImageGenerator` (`negatives.images`;
   `generator` = render: the world's RenderGenerator, which knows each candidate's scene graph;
   `generator` = diffusion: the world's trained text-to-image model (`negatives.diffusion`,
   `guidance_scale`, `num_inference_steps`), whose images a recognizer trained on rendered scenes
   reads back into scene graphs (`negatives.recognizer`), generated beforehand by
   `negatives.candidates` into the folder `candidates` so that steps 3-4 rerun without it).
   `max_images` > 0 builds from the first that many images of the split (a small BiVLC, for
   generators that cost seconds per image).
3. Best-of-n: a simulated annotator perceives each candidate's fit to the negative caption as
   truth (1 or 0, from its scene graph) plus Gaussian noise (sd `select_noise`) and picks the
   candidate perceived best if it is perceived above 1/2, else none: the instance is dropped.
4. Ambiguity: a second annotator perceives the chosen image's fit to the positive caption the same
   way (sd `ambiguity_noise`); if it is perceived above 1/2 the instance is dropped.

Decisions where the paper is silent (each a config parameter with this default):
- one SugarCrepe instance per (image, subset) (`instances_per_image_subset` = 1);
- the generator's mistake rates (`p_*`, per prompt of median difficulty) and prompt difficulty
  spread (`difficulty_sd` = 1.5), and the annotators' noise (`select_noise` = 0.25,
  `ambiguity_noise` = 0.3), chosen so that on the default world best-of-4 drops about as many
  instances as the paper's step 3 (28.4%) and steps 3+4 together about as many as the paper's 61%,
  while the final set stays clean by truth. The paper's step-3 annotators agree less (Cohen's kappa
  0.49) than these simulated ones; the audit prints both;
- new item ids start at `id_offset` = 1_000_000_000: negative caption id = offset + SugarCrepe id,
  negative image id = offset + BiVLC id; a negative caption whose instance did not survive has
  image_id -1 in `extra_captions`;
- filename of a world image: 'world:<image_id>'.
A consequence of the world's exact truth: an Add negative entails its positive ('a red circle and
a blue square' entails 'a red circle'), so every faithful Add image also fits the positive caption
and step 4 drops Add instances except for annotator errors (the paper keeps 19% / 11% of Add).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from itmbench.io import atomic_path, read_parquet_checked, write_parquet
from itmbench.metrics.accuracy import BIVLC_SCORE_NAMES, accuracy_from_correct, bivlc_scores
from itmbench.metrics.intervals import bootstrap_interval
from itmbench.negatives.captions import SUBSETS, TYPES, split_subset
from itmbench.negatives.edits import (  # the edit stage and BiVLC's annotators, shared (negatives.edits)
    EDIT_COLUMNS,
    INSTANCE_COLUMNS,
    STREAM_GENERATE,
    STREAM_SECOND_ANNOTATOR,
    _empty,
    _percent_interval,
    _rate_row,
    _rng,
    _value_row,
    edit_stage,
    filter_candidates,
    instance_keys,
    select_best,
)
from itmbench.negatives.edits import (
    sugarcrepe_instances as sugarcrepe_instances,  # BiVLC's step 0 alone (its callers import it from here)
)
from itmbench.negatives.generator import GeneratedImage, ImageGenerator
from itmbench.negatives.images import MISTAKES, make_generator
from itmbench.papers.bivlc.config import GENERATOR_FIELDS, BiVLCConfig
from itmbench.scoring.embed import EmbeddingCache, pair_dots
from itmbench.scoring.pairs import PairScores, pair_frame
from itmbench.world.captions import CaptionStructure
from itmbench.world.generate import World
from itmbench.world.scene import Scene
from itmbench.world.truth import caption_fits

# Cohen's kappa between pairs of step-3 annotators, BiVLC section 3.1 / appendix H.3.
PAPER_STEP3_KAPPA = 0.49
CHANCE_PERCENT = {"sugarcrepe": 50.0, "i2t": 25.0, "t2i": 25.0, "group": 100.0 / 6.0}

TABLES: dict[str, tuple[str, ...]] = {
    "sugarcrepe": (
        *INSTANCE_COLUMNS,
        "chosen_candidate",
        "judged_ambiguous",
        "in_bivlc",
        "bivlc_id",
    ),
    "instances": (
        "id",
        "image",
        "caption",
        "negative_caption",
        "negative_image",
        "type",
        "subtype",
        "caption_id",
        "negative_caption_id",
        "sugarcrepe_id",
    ),
    "edits": EDIT_COLUMNS,
    "candidates": (
        "sugarcrepe_id",
        "candidate",
        "scene",
        *MISTAKES,
        "fits_negative",
        "fits_positive",
        "chosen",
    ),
    "stages": ("stage", "subset", "type", "subtype", "n"),
}
# Tables that only the world's construction has (absent when BiVLC comes from the released files:
# the coco source, whose added items are written by itmbench.sources.coco_benchmarks in the file layout).
CONSTRUCTION_TABLES = ("edits", "candidates", "stages")
WORLD_EXTRA_TABLES = ("extra_images", "extra_captions")
WORLD_ONLY_COLUMNS = {"sugarcrepe": ("negative_structure", "edit", "chosen_candidate", "judged_ambiguous")}
STAGES = ("edits_proposed", "edits_true_of_image", "sugarcrepe", "step3_chosen", "bivlc")
EXTRA_DIR = "extra_items"
# Keys that only the diffusion generator reads (the workflow leaves them out of a render build's params).
DIFFUSION_ONLY_KEYS = ("guidance_scale", "num_inference_steps", "candidates")
# Keys that only steps 3-4 (the annotators), the render generator or the final ids read: not generation.
NOT_GENERATION_KEYS = ("select_noise", "ambiguity_noise", "id_offset", "render_noise", "candidates", *GENERATOR_FIELDS)
EXTRA_IMAGE_COLUMNS = ("image_id", "split", "n_objects", "scene", "image_size", "pixels")
EXTRA_CAPTION_COLUMNS = ("caption_id", "image_id", "split", "text", "structure")
ITEM_COLUMNS = ("kind", "item_id")


# --- construction ----------------------------------------------------------------------------------


def default_generator(cfg: BiVLCConfig, image_size: int) -> ImageGenerator:
    """The generator a build uses: the pregenerated candidates when the workflow made them, else the registry's."""
    if cfg.candidates:
        from itmbench.negatives.candidates import PregeneratedGenerator

        return PregeneratedGenerator.load(cfg.candidates)
    if cfg.generator != "render":
        raise ValueError(
            f"bivlc params: generator {cfg.generator!r} without `candidates`; expected the folder written by "
            "`itmbench generate-candidates` (the workflow sets it), or pass a generator to build"
        )
    return make_generator(cfg.generator, **cfg.generator_params(image_size))


def build(
    world: World, cfg: BiVLCConfig, generator: ImageGenerator | None = None, **inputs: Any
) -> dict[str, pd.DataFrame]:
    """Build SugarCrepe and BiVLC in the world (steps 0-4 of the module docstring); every table, items last."""
    if inputs:
        raise TypeError(f"bivlc build: unexpected inputs {sorted(inputs)}; expected only `generator`")
    image_size = int(world.images.shape[1])
    generator = generator or default_generator(cfg, image_size)
    gen_name = type(generator).__name__
    sugarcrepe, edits, scenes = edit_stage(world, cfg)
    structures = dict(zip(world.caption_table["caption_id"].to_numpy().tolist(), world.caption_table["structure"]))

    cand = _empty(TABLES["candidates"])
    chosen_col, ambiguous_col, bivlc_col = [], [], []
    inst = _empty(TABLES["instances"])
    extra_img = _empty(EXTRA_IMAGE_COLUMNS)
    for row in sugarcrepe.itertuples(index=False):
        keys = instance_keys(row.image_id, row.subset, row.caption_id)
        negative = CaptionStructure.from_json(row.negative_structure)
        positive = CaptionStructure.from_json(structures[row.caption_id])
        generated = generator.generate(
            negative,
            scenes[row.image_id],
            cfg.n_candidates,
            _rng(cfg.seed, STREAM_GENERATE, *keys),
            text=row.negative_caption,
        )
        if len(generated) != cfg.n_candidates:
            raise ValueError(
                f"generator {gen_name}: {len(generated)} images for SugarCrepe instance {row.id}; "
                f"expected {cfg.n_candidates}"
            )
        made, cand_scenes = [], []
        for k, candidate in enumerate(generated):
            if not isinstance(candidate, GeneratedImage):
                image, scene = candidate
                candidate = GeneratedImage(scene, pixels=np.asarray(image))
            scene = candidate.scene
            if scene is None:
                raise ValueError(
                    f"generator {gen_name}: candidate {k} of SugarCrepe {row.id} has no scene graph; "
                    "the simulated annotators need one (filter a scene-less generator with human annotators)"
                )
            mistakes = set(candidate.mistakes)
            made.append(candidate)
            cand_scenes.append(scene)
            for name, value in (
                ("sugarcrepe_id", row.id),
                ("candidate", k),
                ("scene", scene.to_json()),
                *((m, m in mistakes) for m in MISTAKES),
            ):
                cand[name].append(value)
        fits_neg, fits_pos, chosen, ambiguous = filter_candidates(negative, positive, cand_scenes, cfg, keys)
        cand["fits_negative"] += fits_neg
        cand["fits_positive"] += fits_pos
        cand["chosen"] += [k == chosen for k in range(cfg.n_candidates)]
        chosen_col.append(chosen)
        ambiguous_col.append(ambiguous)
        if chosen < 0 or ambiguous:
            bivlc_col.append(-1)
            continue
        bivlc_id = len(inst["id"])
        bivlc_col.append(bivlc_id)
        negative_image_id = cfg.id_offset + bivlc_id
        values = (
            bivlc_id,
            row.image_id,
            row.caption,
            row.negative_caption,
            negative_image_id,
            row.type,
            row.subtype,
            row.caption_id,
            row.negative_caption_id,
            row.id,
        )
        for name, value in zip(TABLES["instances"], values):
            inst[name].append(value)
        scene = cand_scenes[chosen]
        scene = Scene(image_id=negative_image_id, objects=scene.objects, background=scene.background)
        pixels = made[chosen].image
        if pixels.shape != (image_size, image_size, 3):
            raise ValueError(
                f"generator {gen_name}: image shape {pixels.shape}; expected {(image_size, image_size, 3)}"
            )
        for name, value in zip(
            EXTRA_IMAGE_COLUMNS,
            (negative_image_id, cfg.split, len(scene.objects), scene.to_json(), image_size, pixels.tobytes()),
        ):
            extra_img[name].append(value)

    sugarcrepe["chosen_candidate"] = np.asarray(chosen_col, dtype=np.int64)
    sugarcrepe["judged_ambiguous"] = np.asarray(ambiguous_col, dtype=bool)
    sugarcrepe["bivlc_id"] = np.asarray(bivlc_col, dtype=np.int64)
    sugarcrepe["in_bivlc"] = sugarcrepe["bivlc_id"] >= 0
    sugarcrepe = sugarcrepe[list(TABLES["sugarcrepe"])]
    instances = pd.DataFrame(inst, columns=list(TABLES["instances"])).astype(
        {c: "int64" for c in ("id", "image", "negative_image", "caption_id", "negative_caption_id", "sugarcrepe_id")}
    )
    candidates = pd.DataFrame(cand, columns=list(TABLES["candidates"])).astype(
        {"sugarcrepe_id": "int64", "candidate": "int64", **{c: "bool" for c in TABLES["candidates"][3:]}}
    )
    extra_images = pd.DataFrame(extra_img, columns=list(EXTRA_IMAGE_COLUMNS)).astype(
        {"image_id": "int64", "n_objects": "int64", "image_size": "int64"}
    )
    negative_image = dict(
        zip(
            sugarcrepe["negative_caption_id"],
            np.where(sugarcrepe["in_bivlc"], cfg.id_offset + sugarcrepe["bivlc_id"], -1),
        )
    )
    extra_captions = pd.DataFrame(
        {
            "caption_id": sugarcrepe["negative_caption_id"].to_numpy(),
            "image_id": np.asarray([negative_image[c] for c in sugarcrepe["negative_caption_id"]], dtype=np.int64),
            "split": cfg.split,
            "text": sugarcrepe["negative_caption"].to_numpy(),
            "structure": sugarcrepe["negative_structure"].to_numpy(),
        }
    ).astype({"caption_id": "int64", "image_id": "int64"})
    return {
        "sugarcrepe": sugarcrepe,
        "instances": instances,
        "edits": edits,
        "candidates": candidates,
        "stages": _stages(sugarcrepe, edits, cfg),
        "extra_images": extra_images,
        "extra_captions": extra_captions,
        "items": _items(sugarcrepe, instances),
    }


def _stages(sugarcrepe: pd.DataFrame, edits: pd.DataFrame, cfg: BiVLCConfig) -> pd.DataFrame:
    """Survivors of each stage per subset (long form)."""
    counts = {
        "edits_proposed": edits["subset"].value_counts(),
        "edits_true_of_image": edits.loc[edits["true_of_image"], "subset"].value_counts(),
        "sugarcrepe": sugarcrepe["subset"].value_counts(),
        "step3_chosen": sugarcrepe.loc[sugarcrepe["chosen_candidate"] >= 0, "subset"].value_counts(),
        "bivlc": sugarcrepe.loc[sugarcrepe["in_bivlc"], "subset"].value_counts(),
    }
    rows = [
        (stage, subset, *split_subset(subset), int(counts[stage].get(subset, 0)))
        for stage in STAGES
        for subset in cfg.subsets
    ]
    return pd.DataFrame(rows, columns=list(TABLES["stages"])).astype({"n": "int64"})


def _items(sugarcrepe: pd.DataFrame, instances: pd.DataFrame) -> pd.DataFrame:
    """Every image and caption a model must embed: both halves, sorted, each once."""
    images = np.unique(np.concatenate([sugarcrepe["image_id"].to_numpy(), instances["negative_image"].to_numpy()]))
    captions = np.unique(
        np.concatenate([sugarcrepe["caption_id"].to_numpy(), sugarcrepe["negative_caption_id"].to_numpy()])
    )
    return pd.DataFrame(
        {
            "kind": ["image"] * len(images) + ["caption"] * len(captions),
            "item_id": np.concatenate([images, captions]).astype(np.int64),
        }
    )


# --- files -------------------------------------------------------------------------------------------


def write(tables: Mapping[str, pd.DataFrame], out_dir: str | Path) -> None:
    """Write every table as parquet and the new items as `extra_items/`, atomically; items.parquet last."""
    out = Path(out_dir)
    missing = [n for n in (*TABLES, "items") if n not in tables and n not in CONSTRUCTION_TABLES]
    if sum(n in tables for n in WORLD_EXTRA_TABLES) == 1:
        missing += [n for n in WORLD_EXTRA_TABLES if n not in tables]
    if missing:
        raise ValueError(f"bivlc write to {out}: missing tables {missing}")
    for name in TABLES:
        if name in tables:
            write_parquet(out / f"{name}.parquet", tables[name])
    if "extra_images" in tables:
        _write_world_extra(tables, out)
    write_parquet(out / "items.parquet", tables["items"][list(ITEM_COLUMNS)])


def _write_world_extra(tables: Mapping[str, pd.DataFrame], out: Path) -> None:
    """The world's added items as an items folder `extra_items/` (pixels in images.npy, scenes)."""
    extra = tables["extra_images"]
    side = int(extra["image_size"].iloc[0]) if len(extra) else 0
    pixels = np.zeros((len(extra), side, side, 3), dtype=np.uint8)
    for k, (size, raw) in enumerate(zip(extra["image_size"], extra["pixels"])):
        if int(size) != side or len(raw) != side * side * 3:
            raise ValueError(
                f"bivlc extra image {extra['image_id'].iloc[k]}: {len(raw)} bytes; expected {side}x{side}x3"
            )
        pixels[k] = np.frombuffer(raw, dtype=np.uint8).reshape(side, side, 3)
    d = out / EXTRA_DIR
    d.mkdir(parents=True, exist_ok=True)
    with atomic_path(d / "images.npy") as tmp:
        with open(tmp, "wb") as fh:
            np.save(fh, pixels)
    write_parquet(d / "scenes.parquet", extra[["image_id", "scene"]])
    write_parquet(d / "captions.parquet", tables["extra_captions"][list(EXTRA_CAPTION_COLUMNS)])
    write_parquet(d / "images.parquet", extra[["image_id", "split", "n_objects"]])


def _required_columns(name: str, columns: tuple[str, ...]) -> tuple[str, ...]:
    """The columns a table must have: its columns less the world-only ones."""
    return tuple(c for c in columns if c not in WORLD_ONLY_COLUMNS.get(name, ()))


# What `read` names when a file of the folder is absent.
FOLDER = "a BiVLC benchmark folder (run the bivlc rule)"


def read(out_dir: str | Path) -> dict[str, pd.DataFrame]:
    """Read and validate a folder written by `write` (extra images come back with their pixels)."""
    d = Path(out_dir)
    tables = {
        name: read_parquet_checked(d / f"{name}.parquet", _required_columns(name, cols), FOLDER)
        for name, cols in TABLES.items()
        if name not in CONSTRUCTION_TABLES or (d / f"{name}.parquet").exists()
    }
    tables["items"] = read_parquet_checked(d / "items.parquet", ITEM_COLUMNS, FOLDER)
    e = d / EXTRA_DIR
    if not (e / "scenes.parquet").exists() and not (e / "images.npy").exists():
        return tables  # not the world's layout: added items are files (the coco source), read by ItemStore
    images = read_parquet_checked(e / "images.parquet", ("image_id", "split", "n_objects"), FOLDER)
    scenes = read_parquet_checked(e / "scenes.parquet", ("image_id", "scene"), FOLDER)
    if not (e / "images.npy").exists():
        raise FileNotFoundError(f"{e / 'images.npy'}: missing; expected the pixels of the extra images")
    pixels = np.load(e / "images.npy")
    if pixels.shape[0] != len(images) or not images["image_id"].equals(scenes["image_id"]):
        raise ValueError(
            f"{e}: images.npy has {pixels.shape[0]} images, images.parquet {len(images)} rows; expected equal"
        )
    extra = images.assign(
        scene=scenes["scene"].to_numpy(),
        image_size=np.full(len(images), pixels.shape[1] if pixels.ndim == 4 else 0, dtype=np.int64),
        pixels=[p.tobytes() for p in pixels],
    )
    tables["extra_images"] = extra[list(EXTRA_IMAGE_COLUMNS)]
    tables["extra_captions"] = read_parquet_checked(e / "captions.parquet", EXTRA_CAPTION_COLUMNS, FOLDER)
    return tables


# --- audit -------------------------------------------------------------------------------------------


def cohen_kappa(a: np.ndarray, b: np.ndarray) -> float:
    """Cohen's kappa of two binary raters (the paper's step-3 agreement on 'an image' vs 'none')."""
    a, b = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    if a.size == 0:
        return float("nan")
    po = float(np.mean(a == b))
    pe = float(a.mean() * b.mean() + (1 - a.mean()) * (1 - b.mean()))
    return float("nan") if pe == 1.0 else (po - pe) / (1.0 - pe)


def audit(world: World, tables: Mapping[str, pd.DataFrame], cfg: BiVLCConfig) -> pd.DataFrame:
    """What only the world can check: filter rates vs the paper, generator mistakes, and truth of the final set."""
    margin = cfg.relation_margin
    scenes = {int(i): Scene.from_json(s) for i, s in zip(world.scene_table["image_id"], world.scene_table["scene"])}
    positive = {
        int(c): CaptionStructure.from_json(s)
        for c, s in zip(world.caption_table["caption_id"], world.caption_table["structure"])
    }
    sc, edits, cand, inst = tables["sugarcrepe"], tables["edits"], tables["candidates"], tables["instances"]
    negative = {int(i): CaptionStructure.from_json(s) for i, s in zip(sc["id"], sc["negative_structure"])}
    # Truth recomputed from the scene graphs, not read from the stored flags.
    edit_true = np.array(
        [
            caption_fits(CaptionStructure.from_json(s), scenes[int(i)], margin)
            for s, i in zip(edits["negative_structure"], edits["image_id"])
        ],
        dtype=bool,
    )
    cand_fits_neg = np.array(
        [
            caption_fits(negative[int(i)], Scene.from_json(s), margin)
            for i, s in zip(cand["sugarcrepe_id"], cand["scene"])
        ],
        dtype=bool,
    )
    extra_scene = {
        int(i): Scene.from_json(s) for i, s in zip(tables["extra_images"]["image_id"], tables["extra_images"]["scene"])
    }
    neg_img_fits_pos = np.array(
        [
            caption_fits(positive[int(c)], extra_scene[int(i)], margin)
            for c, i in zip(inst["caption_id"], inst["negative_image"])
        ],
        dtype=bool,
    )
    neg_img_fits_neg = np.array(
        [
            caption_fits(negative[int(s)], extra_scene[int(i)], margin)
            for s, i in zip(inst["sugarcrepe_id"], inst["negative_image"])
        ],
        dtype=bool,
    )
    pos_img_fits_neg = np.array(
        [caption_fits(negative[int(s)], scenes[int(i)], margin) for s, i in zip(inst["sugarcrepe_id"], inst["image"])],
        dtype=bool,
    )
    cand_subset = cand["sugarcrepe_id"].map(dict(zip(sc["id"], sc["subset"]))).to_numpy()
    cand_relation = np.array([negative[int(i)].relation is not None for i in cand["sugarcrepe_id"]], dtype=bool)
    from itmbench.papers.bivlc.statistics import published_survival_rates

    paper = published_survival_rates()

    inst_subset = (inst["type"] + "_" + inst["subtype"]).to_numpy()
    rows: list[dict[str, Any]] = []
    for subset in (*cfg.subsets, "overall"):
        e, s, c, i = (
            np.ones(len(v), dtype=bool) if subset == "overall" else np.asarray(v == subset, dtype=bool)
            for v in (edits["subset"].to_numpy(), sc["subset"].to_numpy(), cand_subset, inst_subset)
        )
        chosen = (sc["chosen_candidate"].to_numpy() >= 0)[s]
        n_sc, n_step3, n_final = int(s.sum()), int(chosen.sum()), int(i.sum())
        rows += [
            _value_row(subset, "edits proposed", e.sum()),
            _rate_row(subset, "edits true of the image (%)", int(edit_true[e].sum()), int(e.sum())),
            _value_row(subset, "SugarCrepe instances", n_sc),
            _rate_row(subset, "step 3 dropped (%)", n_sc - n_step3, n_sc),
            _rate_row(subset, "step 4 dropped (%)", n_step3 - n_final, n_step3),
            _value_row(subset, "BiVLC instances", n_final),
            _rate_row(subset, "removed, steps 3+4 (%)", n_sc - n_final, n_sc),
            _value_row(subset, "paper removed (%)", paper[subset]),
            _rate_row(subset, "candidates fitting the negative caption (%)", int(cand_fits_neg[c].sum()), int(c.sum())),
        ]
        for mistake in MISTAKES:
            applicable = c & cand_relation if mistake == "wrong_relation" else c
            rows.append(
                _rate_row(
                    subset,
                    f"candidates with {mistake} (%)"
                    if mistake != "wrong_relation"
                    else "candidates with wrong_relation (% of relation captions)",
                    int(cand[mistake].to_numpy()[applicable].sum()),
                    int(applicable.sum()),
                )
            )
        rows += [
            _rate_row(
                subset, "final: negative image fits positive caption (%)", int(neg_img_fits_pos[i].sum()), n_final
            ),
            _rate_row(
                subset, "final: negative image fits negative caption (%)", int(neg_img_fits_neg[i].sum()), n_final
            ),
            _rate_row(
                subset, "final: positive image fits negative caption (%)", int(pos_img_fits_neg[i].sum()), n_final
            ),
        ]
    rows += [
        _value_row("overall", "paper step 3 dropped (%)", paper["step3"]),
        _value_row("overall", "paper step 4 dropped (%)", paper["step4"]),
    ]
    # A second, independent step-3 annotator on the same candidates: agreement on 'an image' vs 'none'.
    first_any = sc["chosen_candidate"].to_numpy() >= 0
    second_any = np.zeros(len(sc), dtype=bool)
    fits_by_instance = pd.Series(cand_fits_neg).groupby(cand["sugarcrepe_id"].to_numpy()).apply(np.asarray)
    for k, (sid, image_id, subset, caption_id) in enumerate(
        zip(sc["id"], sc["image_id"], sc["subset"], sc["caption_id"])
    ):
        fits = fits_by_instance.get(int(sid), np.zeros(0, bool))
        rng = _rng(cfg.seed, STREAM_SECOND_ANNOTATOR, image_id, SUBSETS.index(subset), caption_id)
        second_any[k] = len(fits) > 0 and select_best(fits, cfg.select_noise, rng) >= 0
    rows += [
        _value_row("overall", "step 3 Cohen's kappa (simulated)", cohen_kappa(first_any, second_any)),
        _value_row("overall", "paper step 3 Cohen's kappa", PAPER_STEP3_KAPPA),
    ]
    return pd.DataFrame(rows, columns=["row", "column", "value", "lo", "hi"]).astype(
        {"value": "float64", "lo": "float64", "hi": "float64"}
    )


# --- scoring -----------------------------------------------------------------------------------------


def score_dual(tables: Mapping[str, pd.DataFrame], cache: EmbeddingCache) -> pd.DataFrame:
    """One row per SugarCrepe instance: s(C0,I0), s(C1,I0), and for BiVLC members s(C0,I1), s(C1,I1) (else NaN).

    A BiVLC instance linked to a SugarCrepe row (sugarcrepe_id >= 0: the world, where BiVLC is built
    from its own SugarCrepe) is scored on that row's items. An unlinked one (sugarcrepe_id = -1: the
    released BiVLC, whose captions were reformatted and whose images come with the dataset) gets a
    row of its own, with sugarcrepe_id -1, scored on its own items; it does not count in SugarCrepe.
    """
    return _score_frame(tables, lambda captions, images: pair_dots(cache, captions, images))


def _linked(tables: Mapping[str, pd.DataFrame]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The BiVLC instances linked to a SugarCrepe row (indexed by it), and the unlinked ones (released BiVLC)."""
    all_inst = tables["instances"]
    linked = all_inst["sugarcrepe_id"].to_numpy(np.int64) >= 0
    return all_inst[linked].set_index("sugarcrepe_id"), all_inst[~linked]


def _quadruples(tables: Mapping[str, pd.DataFrame]) -> tuple[np.ndarray, ...]:
    """Per SugarCrepe row: I0, C0, C1, I1 (-1 outside BiVLC) and BiVLC membership."""
    sc = tables["sugarcrepe"]
    inst, _ = _linked(tables)
    member = sc["in_bivlc"].to_numpy(bool)
    i1 = np.full(len(sc), -1, dtype=np.int64)
    i1[member] = inst.loc[sc["id"].to_numpy()[member], "negative_image"].to_numpy(np.int64)
    c0, c1 = sc["caption_id"].to_numpy(np.int64), sc["negative_caption_id"].to_numpy(np.int64)
    return sc["image_id"].to_numpy(np.int64), c0, c1, i1, member


def pairs_needed(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """The (caption_id, image_id) pairs a cross scorer must score: 2 per SugarCrepe instance, 4 per BiVLC one."""
    i0, c0, c1, i1, member = _quadruples(tables)
    _, own = _linked(tables)  # unlinked BiVLC instances (released BiVLC): 4 pairs each on their own items
    o0, o1 = own["caption_id"].to_numpy(np.int64), own["negative_caption_id"].to_numpy(np.int64)
    oi0, oi1 = own["image"].to_numpy(np.int64), own["negative_image"].to_numpy(np.int64)
    return pair_frame(
        np.concatenate([c0, c1, c0[member], c1[member], o0, o1, o0, o1]),
        np.concatenate([i0, i0, i1[member], i1[member], oi0, oi0, oi1, oi1]),
    )


def score_pairs(tables: Mapping[str, pd.DataFrame], pairs: PairScores) -> pd.DataFrame:
    """The per-instance table of `score_dual`, from a cross scorer's pair scores."""
    return _score_frame(tables, pairs.get)


def _score_frame(tables: Mapping[str, pd.DataFrame], pair_score: Any) -> pd.DataFrame:
    """The per-instance table, with s(caption, image) of row pairs given by `pair_score(captions, images)`."""
    sc = tables["sugarcrepe"]
    image, c0, c1, i1, member = _quadruples(tables)
    s01 = np.full(len(sc), np.nan)
    s11 = np.full(len(sc), np.nan)
    s01[member] = pair_score(c0[member], i1[member])
    s11[member] = pair_score(c1[member], i1[member])
    out = pd.DataFrame(
        {
            "sugarcrepe_id": sc["id"].to_numpy(np.int64),
            "bivlc_id": sc["bivlc_id"].to_numpy(np.int64),
            "in_bivlc": member,
            "subset": sc["subset"].to_numpy(),
            "type": sc["type"].to_numpy(),
            "subtype": sc["subtype"].to_numpy(),
            "image_id": image,
            "caption_id": c0,
            "negative_caption_id": c1,
            "negative_image_id": i1,
            "s_c0_i0": pair_score(c0, image),
            "s_c1_i0": pair_score(c1, image),
            "s_c0_i1": s01,
            "s_c1_i1": s11,
        }
    )
    _, own = _linked(tables)
    if len(own) == 0:
        return out
    c0, c1 = own["caption_id"].to_numpy(np.int64), own["negative_caption_id"].to_numpy(np.int64)
    i0, i1 = own["image"].to_numpy(np.int64), own["negative_image"].to_numpy(np.int64)
    rows = pd.DataFrame(
        {
            "sugarcrepe_id": np.full(len(own), -1, dtype=np.int64),
            "bivlc_id": own["id"].to_numpy(np.int64),
            "in_bivlc": np.ones(len(own), dtype=bool),
            "subset": (own["type"] + "_" + own["subtype"]).to_numpy(),
            "type": own["type"].to_numpy(),
            "subtype": own["subtype"].to_numpy(),
            "image_id": i0,
            "caption_id": c0,
            "negative_caption_id": c1,
            "negative_image_id": i1,
            "s_c0_i0": pair_score(c0, i0),
            "s_c1_i0": pair_score(c1, i0),
            "s_c0_i1": pair_score(c0, i1),
            "s_c1_i1": pair_score(c1, i1),
        }
    )
    return pd.concat([out, rows], ignore_index=True)


def _metric(correct: np.ndarray, confidence: float) -> dict[str, Any]:
    """{value, lo, hi, n} in percent with a Wilson interval; None values where there are no instances."""
    if len(correct) == 0:
        return {"value": None, "lo": None, "hi": None, "n": 0}
    acc = accuracy_from_correct(correct, confidence)
    lo, hi = _percent_interval(acc.percent, acc.ci_percent)
    return {"value": acc.percent, "lo": lo, "hi": hi, "n": acc.n}


def _sugarcrepe_rows(scores: pd.DataFrame) -> pd.DataFrame:
    """The rows that are SugarCrepe instances (not BiVLC instances scored on their own items)."""
    return scores[scores["sugarcrepe_id"].to_numpy(np.int64) >= 0]


def _group_metrics(scores: pd.DataFrame, confidence: float) -> dict[str, dict[str, Any]]:
    """SugarCrepe accuracy over all rows and the seven BiVLC scores over BiVLC rows."""
    sugarcrepe = _sugarcrepe_rows(scores)
    out = {"sugarcrepe": _metric((sugarcrepe["s_c0_i0"] > sugarcrepe["s_c1_i0"]).to_numpy(), confidence)}
    b = scores[scores["in_bivlc"]]
    per = bivlc_scores(b["s_c0_i0"], b["s_c0_i1"], b["s_c1_i0"], b["s_c1_i1"])
    for name in BIVLC_SCORE_NAMES:
        out[name] = _metric(getattr(per, name), confidence)
    return out


def summarize(scores: pd.DataFrame, n_boot: int = 1000, seed: int = 0, confidence: float = 0.95) -> dict:
    """SugarCrepe accuracy and BiVLC I2T/T2I/Group (+ the four comparisons), overall, per type and subtype, in %."""
    metrics = _group_metrics(scores, confidence)
    b = scores[scores["in_bivlc"]]
    per = bivlc_scores(b["s_c0_i0"], b["s_c0_i1"], b["s_c1_i0"], b["s_c1_i1"])
    gap = np.stack([per.i2t, per.t2i], axis=1).astype(float)
    lo, hi = bootstrap_interval(gap, lambda x: 100.0 * float(x[:, 0].mean() - x[:, 1].mean()), n_boot, seed, confidence)
    metrics["i2t_minus_t2i"] = {
        "value": 100.0 * float(gap[:, 0].mean() - gap[:, 1].mean()) if len(gap) else None,
        "lo": None if np.isnan(lo) else lo,
        "hi": None if np.isnan(hi) else hi,
        "n": len(gap),
    }
    by_type = {t: _group_metrics(scores[scores["type"] == t], confidence) for t in TYPES}
    by_subtype = {s: _group_metrics(scores[scores["subset"] == s], confidence) for s in SUBSETS}
    return {
        "metrics": metrics,
        "by_type": by_type,
        "by_subtype": by_subtype,
        "chance": CHANCE_PERCENT,
        "n_sugarcrepe": len(_sugarcrepe_rows(scores)),
        "n_bivlc": len(b),
        "confidence": confidence,
        "interval": f"Wilson {confidence:.0%}; i2t_minus_t2i: paired percentile bootstrap ({n_boot}, seed {seed})",
    }
