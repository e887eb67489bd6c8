"""Why ShowTell scores lower on the ResNet tower while BISON Table 6's attention systems score higher (docs/bison.md,
"Table 6 and Table 7"): ShowTell trained again on each tower, once on the plain mean of the tower's grid (the
appendix's holistic feature, as `bison_table6` trains it) and once on the tower's own pooled image feature (what its
contrastive training shaped: the ViT's projected class token, the ResNet's attention pool), everything else as
params.yaml's `bison_captioners`.

Reads a finished default run (its items, BISON benchmark and the towers' checkpoints); writes
reports/bison/showtell_feature.md (and prints it). About two minutes of CPU per tower and feature.

Usage: python benchmarks/bison_showtell_feature.py --run RUN [--params params.yaml] [--md FILE]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch

FEATURES = {
    "mean": "the mean of the grid (the recipe)",
    "pooled": "the tower's pooled feature",
}
COLUMNS = {"bleu4": "BLEU-4", "cider_d": "CIDEr", "meteor": "METEOR", "bison": "BISON"}


@torch.no_grad()
def pooled_features(encoder, images: np.ndarray, batch_size: int = 256) -> torch.Tensor:
    """The tower's own image feature (before normalisation) as a one-region grid [N, 1, D]."""
    encoder.model.eval()  # a ResNet's batch norms read their running statistics, not the batch's
    visual = encoder.model.visual
    out = [visual(encoder.image_tensor(images[s : s + batch_size])).float() for s in range(0, len(images), batch_size)]
    return torch.cat(out)[:, None, :]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--run", default=".", help="a finished default run's folder")
    p.add_argument("--params", default="params.yaml", help="the params whose bison_captioners, score and models apply")
    p.add_argument("--md", default="reports/bison/showtell_feature.md", help="where the Markdown table goes")
    args = p.parse_args(argv)

    import pandas as pd
    import yaml

    from itmbench.io import write_text
    from itmbench.models.registry import build_encoder, pick_device
    from itmbench.models.spec import model_spec
    from itmbench.papers.bison import canonical
    from itmbench.papers.bison import feature_captioners as fc
    from itmbench.papers.bison.config import BisonCaptionersConfig
    from itmbench.params import make_config
    from itmbench.scoring.embed import ItemStore

    torch.set_num_threads(1)
    run = Path(args.run)
    params = yaml.safe_load(Path(args.params).read_text())
    # the cross-entropy block only: the question is what ShowTell learns from each feature, before any fine-tune
    cfg = make_config(BisonCaptionersConfig, {**params["bison_captioners"], "systems": ["showtell"], "scst_epochs": 0})
    captions = pd.read_parquet(run / "data/world/items/captions.parquet")
    annotations = canonical.read(run / "data/world/bison")["annotations"]
    metrics = [m for m in params["bison_caption_metrics"]["metrics"] if m in COLUMNS]
    lines = [
        "**ShowTell on each tower's grid mean and on its pooled feature** (params.yaml bison_captioners, "
        f"{cfg.epochs} cross-entropy epochs; captioning scores on the {cfg.caption_split} split, x100; BISON on the "
        f"{params['bison']['split']} split; 95% intervals)",
        "",
        "| tower | image feature | " + " | ".join(COLUMNS[m] for m in [*metrics, "bison"]) + " | CPU s |",
        "|---|---|" + "---|" * (len(metrics) + 2),
    ]
    for tower in cfg.towers:
        spec = model_spec(tower, params["models"][tower])
        encoder = build_encoder(spec, pick_device("cpu"), run / f"results/world/models/{tower}/model.pt")
        store = ItemStore(run / "data/world/items", image_size=getattr(encoder, "image_size", 224))
        for name, features in (("mean", fc.grid_features), ("pooled", pooled_features)):
            start = time.process_time()
            cells = fc.tower_cells(
                encoder, store, captions, annotations, cfg, params["bison"]["split"], metrics,
                {**params["score"]}, tower, features=features,
            )  # fmt: skip
            by = cells.set_index("metric")
            row = [
                f"{by.loc[m, 'value']:.2f} ({by.loc[m, 'lo']:.2f}–{by.loc[m, 'hi']:.2f})" for m in [*metrics, "bison"]
            ]
            lines.append(
                f"| {tower} | {FEATURES[name]} | " + " | ".join(row) + f" | {time.process_time() - start:.0f} |"
            )
            print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    Path(args.md).parent.mkdir(parents=True, exist_ok=True)
    write_text(args.md, text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
