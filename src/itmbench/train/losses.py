"""The trainers' losses, as pure functions of unit-norm embeddings (and the model's logit scale).

- `clip_loss`: CLIP's symmetric InfoNCE, the mean of image->text and text->image cross-entropy
  over the in-batch logit matrix (BiVLC's CLIP_COCO; TROHN-Img on the enlarged batch).
- `negclip_loss`: NegCLIP's: the text side has extra columns (hard-negative captions) that serve
  as negatives for image->text only; text->image runs over the positive captions alone.
- `vse_hinge_loss`: VSE++'s max-violation hinge: for each positive pair, the hardest in-batch
  negative caption and the hardest in-batch negative image, each at `margin`, on cosine
  similarity (no temperature). Averaged over the batch (VSE++ sums; Adam is invariant to the
  scale, and the mean keeps logged losses comparable across batch sizes). With `hardest=False`
  it is the sum of hinges over every in-batch negative (VSE0), which the vse_hinge trainer uses
  for its warm-up epochs: from a random initialisation the max-violation loss alone collapses
  every embedding onto one point (loss 2 * margin, chance retrieval) in the world.
- `in_batch_softmax_loss`: CxC's eq. (1), the bidirectional in-batch sampled softmax, as a sum of
  the two directions (eq. 2 adds L_i2t and L_t2i). S is the dot product of unit-norm embeddings
  times the model's learned temperature exp(logit_scale) (CxC's S is a dot product of unnormalised
  embeddings, whose scale lives in their norms; the unit-norm interface moves it to the
  temperature). The denominator includes the positive, as in the sampled softmax of Gillick et al.
  (2018) and Yang et al. (2019) that CxC cites; eq. (1)'s "j != i" would make the loss unbounded
  below and is read as a typo.
- `multitask_loss`: CxC's DE_T2T+I2T: L_i2t (both directions) + c * L_t2t (both directions).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

MAX_LOGIT_SCALE = 100.0  # CLIP clamps the temperature at 100


def temperature(logit_scale: torch.Tensor) -> torch.Tensor:
    """exp(logit_scale), clamped at CLIP's 100."""
    return logit_scale.exp().clamp(max=MAX_LOGIT_SCALE)


def clip_loss(img: torch.Tensor, txt: torch.Tensor, logit_scale: torch.Tensor) -> torch.Tensor:
    """Symmetric InfoNCE over the batch: each image's own caption against the others, and back."""
    logits = temperature(logit_scale) * img @ txt.T
    labels = torch.arange(len(img), device=img.device)
    return 0.5 * (F.cross_entropy(logits, labels) + F.cross_entropy(logits.T, labels))


def negclip_loss(img: torch.Tensor, txt: torch.Tensor, logit_scale: torch.Tensor) -> torch.Tensor:
    """NegCLIP: img [P, D] against txt [P + extra, D] (rows after P are hard negatives, text side only)."""
    n = len(img)
    if len(txt) < n:
        raise ValueError(f"negclip_loss: {len(txt)} captions for {n} images; expected the positives first")
    logits = temperature(logit_scale) * img @ txt.T
    labels = torch.arange(n, device=img.device)
    return 0.5 * (F.cross_entropy(logits, labels) + F.cross_entropy(logits[:, :n].T, labels))


def vse_hinge_loss(img: torch.Tensor, txt: torch.Tensor, margin: float, hardest: bool = True) -> torch.Tensor:
    """VSE++ hinge on cosine similarity, batch mean: hardest negative caption and image per pair (else sum over all)."""
    sims = img @ txt.T
    pos = sims.diagonal()
    eye = torch.eye(len(sims), dtype=torch.bool, device=sims.device)
    cost_caption = (margin + sims - pos[:, None]).clamp(min=0).masked_fill(eye, 0.0)  # row i: captions j != i
    cost_image = (margin + sims - pos[None, :]).clamp(min=0).masked_fill(eye, 0.0)  # column j: images i != j
    if not hardest:
        return (cost_caption.sum(dim=1) + cost_image.sum(dim=0)).mean()
    return (cost_caption.max(dim=1).values + cost_image.max(dim=0).values).mean()


def in_batch_softmax_loss(left: torch.Tensor, right: torch.Tensor, logit_scale: torch.Tensor) -> torch.Tensor:
    """CxC eq. (1): in-batch sampled softmax left->right plus right->left (a sum of two mean cross-entropies)."""
    logits = temperature(logit_scale) * left @ right.T
    labels = torch.arange(len(left), device=left.device)
    return F.cross_entropy(logits, labels) + F.cross_entropy(logits.T, labels)


def multitask_loss(
    img: torch.Tensor, txt: torch.Tensor, partner: torch.Tensor, logit_scale: torch.Tensor, t2t_weight: float
) -> torch.Tensor:
    """CxC eq. (2): L_i2t + L_t2i + c * L_t2t, image-caption and caption-co-caption in-batch softmax."""
    return in_batch_softmax_loss(img, txt, logit_scale) + t2t_weight * in_batch_softmax_loss(txt, partner, logit_scale)
