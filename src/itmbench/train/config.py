"""Training hyperparameters: one typed config for every trainer (params.yaml section `train`).

Defaults are the BiVLC recipe (AdamW 0.9/0.98/1e-6, weight decay 0.1, cosine with 50 warm-up
steps) scaled down to the world and to a CPU: each trainer takes at most ~40 s on 2 cores on the
default world (10,000 train captions, the 3.4M-parameter `itm-clip-tiny`). Decisions where the
papers are silent, each a field below:
- `epochs` = 3 of 128 positives a step: the budget (the earlier 6 epochs took ~60-80 s on 2 cores;
  negclip, trohn_img and de_t2t_i2t cost ~1.2x contrastive per epoch, de_t2t ~0.6x).
- `batch_size` counts the *positive* pairs of a step; hard negatives are added to it, as BiVLC's
  appendix E words it ("a batch size of 200, and then we add negatives"). The same number of
  positives for every trainer, so that the trainers differ only in their negatives and losses.
- `t2t_weight` (CxC's c in L = L_i2t + L_t2i + c * L_t2t) is unspecified in the paper: 1.0.
- `hinge_margin` is VSE++'s 0.2. From a random initialisation the max-violation loss collapses
  the embeddings in the world (loss stuck at 2 * margin, chance retrieval; VSE++ starts from
  pretrained encoders), so the first `hinge_warmup_epochs` = 1 use the sum of hinges over every
  in-batch negative (VSE0, VSE++'s own baseline loss): our decision; 0 gives the max violation
  throughout, as the world's `vse` does now that it starts from clip's towers (params.yaml).
- `trohn_img_fraction` = 0.5: TROHN-Img has about half as many instances as COCO has captions, so
  its pairs (positive + negative) number about as many as COCO's (296,070 x 2 vs 591,753), and an
  epoch of TROHN-Img costs as much as an epoch of in-batch training.
- `filter_negative_images` = False: BiVLC's TROHN-Img keeps the generator's image unchecked (section
  5.3 estimates its noise at about 61%), so by default the first candidate is kept, as the paper
  does. The world can check it: True keeps a negative image only where the negative caption is true
  of it and the positive caption false (the ablation model `clip_trohn_img_filtered`).
- `negclip_neighbours` = 3 (negclip_aro, ARO's NegCLIP): the nearest train images of each image by the
  starting model's image embeddings, one of which (with one of its captions and a swap of that caption) joins
  each sample in a batch. The authors' training file lists each row's neighbours (`neg_image`, one drawn per
  epoch); how many it lists is stated in the paper, whose text we could not read: 3 is our choice.
- `select_on` = val_r1: the kept epoch is the one of best mean validation R@1 over the trainer's
  tasks. BiVLC selects its TROHN fine-tunes on "accuracy on the corresponding validation set"
  (appendix E): `hard_negative_accuracy` makes hard-negative captions of the val captions as the
  train negatives are made and keeps the epoch whose image scores its caption above its negative
  most often (`loop.hard_negative_accuracy`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

SELECT_ON = ("val_r1", "hard_negative_accuracy")


@dataclass(frozen=True)
class TrainConfig:
    """Training hyperparameters of every trainer (params.yaml section `train`)."""

    SECTION: ClassVar[str] = "train"
    OUTSIDE: ClassVar[dict[str, str]] = {"relation_margin": "world.relation_margin"}

    # Optimisation (BiVLC appendix E, scaled down).
    epochs: int  # passes over the trainer's samples (train captions; TROHN-Img instances)
    batch_size: int  # positive pairs per step; hard negatives come on top
    lr: float  # peak learning rate (from scratch; BiVLC fine-tunes at 1e-6)
    weight_decay: float  # AdamW decay of matrices; none on gains, biases, logit scale
    beta1: float  # AdamW beta1
    beta2: float  # AdamW beta2
    eps: float  # AdamW epsilon
    warmup_steps: int  # linear warm-up steps before the cosine decay
    seed: int  # initialisation, shuffling and every hard negative
    # Hard negatives (negclip, trohn_img): SugarCrepe-style edits of the train captions.
    hard_negatives_per_sample: int  # negatives per positive (negclip: captions; trohn_img: pairs)
    negative_subsets: tuple[str, ...]  # SugarCrepe edit types the negatives are drawn from
    relation_margin: float  # truth margin of relations; must equal world.relation_margin
    trohn_img_fraction: float  # TROHN-Img instances per train caption (0.5: pairs = captions)
    image_candidates: int  # generated images per negative caption (BiVLC step 2: 4)
    filter_negative_images: bool  # keep a negative image only if it fits caption- and not caption+
    generator: dict[str, Any]  # RenderGenerator overrides (mistake rates...)
    negclip_neighbours: int  # negclip_aro: nearest train images per image, NegCLIP's hard-negative images
    # Losses.
    hinge_margin: float  # VSE++ margin of the max-violation hinge loss
    hinge_warmup_epochs: int  # vse_hinge: first epochs with the sum of hinges (VSE0) before the max violation
    t2t_weight: float  # CxC's c: weight of the caption-caption loss in de_t2t_i2t
    # Checkpoint selection.
    select_on: str  # val_r1 (mean validation R@1 of the trainer's tasks) or hard_negative_accuracy (BiVLC)

    def __post_init__(self) -> None:
        object.__setattr__(self, "negative_subsets", tuple(self.negative_subsets))
        # Every range, enum and count is the schema's (its ranges and `x-constraints`, checked when a section is
        # read: make_config); the schema's enums are the code's names (tests/test_params_checks.py).
