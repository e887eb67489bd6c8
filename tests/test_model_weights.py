"""Where pretrained weights come from, tested without a download: each format is made here with random weights.

The COCO model specs (open_clip tags with QuickGELU, NegCLIP's and BiVLC's checkpoint files, Hugging
Face repositories, URLs, open_clip model folders) all reach the same loader; these tests save a
random-weight model in each format and check that the loaded encoder gives exactly its outputs.
"""

from __future__ import annotations

import json

import numpy as np
import open_clip
import pytest
import torch

from itmbench.models import openclip
from itmbench.models.openclip import checkpoint_state_dict, register_local_configs
from itmbench.models.registry import build_encoder
from itmbench.models.spec import ModelSpec, model_spec

CPU = torch.device("cpu")
TEXTS = ["a red circle left of a blue square", "two small green triangles"]


def _images(size: int = 64) -> np.ndarray:
    return np.random.default_rng(0).integers(0, 255, size=(2, size, size, 3), dtype=np.uint8)


@pytest.fixture(scope="module")
def tiny():
    """A random-weight itm-clip-tiny with QuickGELU, and its reference outputs."""
    register_local_configs()
    torch.manual_seed(1)
    model = open_clip.create_model("itm-clip-tiny", force_quick_gelu=True).eval()
    return model


def _spec(**kw) -> ModelSpec:
    return model_spec("m", {"family": "open_clip", "arch": "itm-clip-tiny", "quick_gelu": True, **kw})


def _same_as(enc, model) -> bool:
    """The encoder's image and text embeddings equal the reference model's on the same inputs."""
    x = _images()
    with torch.no_grad():
        ref_i = model.encode_image(enc.image_tensor(x), normalize=True)
        ref_t = model.encode_text(enc.text_tensor(TEXTS), normalize=True)
    return torch.equal(enc.encode_images(x), ref_i) and torch.equal(enc.encode_texts(TEXTS), ref_t)


def test_quick_gelu_on_and_off_give_different_outputs_from_the_same_weights(tiny, tmp_path):
    """OpenAI's weights need QuickGELU (SugarCrepe issue #7): the flag must reach the model, and changes every score."""
    path = tmp_path / "weights.pt"
    torch.save(tiny.state_dict(), path)  # an open_clip state dict, as open_clip saves pretrained weights
    quick = build_encoder(_spec(pretrained=str(path), quick_gelu=True), CPU)
    plain = build_encoder(_spec(pretrained=str(path), quick_gelu=False), CPU)
    assert _same_as(quick, tiny)
    x = _images()
    gap_img = (quick.encode_images(x) - plain.encode_images(x)).abs().max().item()
    gap_txt = (quick.encode_texts(TEXTS) - plain.encode_texts(TEXTS)).abs().max().item()
    assert gap_img > 1e-4 and gap_txt > 1e-4  # same weights, other activation: other embeddings
    acts = {type(m).__name__ for m in quick.model.modules()} ^ {type(m).__name__ for m in plain.model.modules()}
    assert acts == {"QuickGELU", "GELU"}


def test_open_clip_tags_are_passed_to_open_clip_and_files_loaded_by_us(tmp_path, monkeypatch):
    """'openai' for ViT-B-32/B-16/L-14 is a tag (open_clip downloads it); an unknown string is an error naming it."""
    for arch in ("ViT-B-32", "ViT-B-16", "ViT-L-14"):
        spec = model_spec("c", {"family": "open_clip", "arch": arch, "pretrained": "openai", "quick_gelu": True})
        assert openclip.resolve_weights(spec) == ("openai", None)
    spec = model_spec("c", {"family": "open_clip", "arch": "ViT-B-32", "pretrained": "no/such/file.pt"})
    with pytest.raises(ValueError, match="models.c: pretrained 'no/such/file.pt' is neither an open_clip tag"):
        openclip.resolve_weights(spec)


def test_negclip_style_checkpoint_with_state_dict_and_module_prefixes(tiny, tmp_path):
    """open_clip's trainer (NegCLIP's release): {'epoch', 'name', 'state_dict': {'module.…'}, 'optimizer'}."""
    state = {f"module.{k}": v for k, v in tiny.state_dict().items()}
    path = tmp_path / "negclip.pth"
    torch.save(
        {"epoch": 5, "name": "negclip", "state_dict": state, "optimizer": {"state": {}, "param_groups": []}}, path
    )
    assert _same_as(build_encoder(_spec(pretrained=str(path)), CPU), tiny)


def test_bivlc_style_checkpoint_with_model_state_dict(tiny, tmp_path):
    """BiVLC's fine-tuning script saves {'epoch', 'model_state_dict', 'optimizer_state_dict', 'loss'}."""
    path = tmp_path / "best_CLIP_COCO_9.pt"
    torch.save(
        {"epoch": 9, "model_state_dict": tiny.state_dict(), "optimizer_state_dict": {}, "loss": torch.tensor(1.5)}, path
    )
    assert _same_as(build_encoder(_spec(pretrained=str(path)), CPU), tiny)


def test_hf_hub_file_goes_through_huggingface_hub(tiny, tmp_path, monkeypatch):
    """'hf-hub:OWNER/REPO/FILE' asks huggingface_hub for that file; 'hf-hub:OWNER/REPO' for its only checkpoint."""
    import huggingface_hub

    path = tmp_path / "best_CLIP_TROHN-Img_9.pt"
    torch.save({"model_state_dict": tiny.state_dict()}, path)
    asked = []

    def fake_download(repo_id: str, filename: str) -> str:
        asked.append((repo_id, filename))
        return str(path)

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", fake_download)
    monkeypatch.setattr(huggingface_hub, "list_repo_files", lambda repo: ["README.md", "best_CLIP_TROHN-Img_9.pt"])
    enc = build_encoder(_spec(pretrained="hf-hub:imirandam/CLIP_TROHN-Img/best_CLIP_TROHN-Img_9.pt"), CPU)
    assert _same_as(enc, tiny)
    build_encoder(_spec(pretrained="hf-hub:imirandam/CLIP_TROHN-Img"), CPU)
    assert asked == [("imirandam/CLIP_TROHN-Img", "best_CLIP_TROHN-Img_9.pt")] * 2
    monkeypatch.setattr(huggingface_hub, "list_repo_files", lambda repo: ["a.pt", "b.pt"])
    with pytest.raises(ValueError, match=r"hf-hub:o/r: 2 checkpoint files \['a.pt', 'b.pt'\]; expected one"):
        build_encoder(_spec(pretrained="hf-hub:o/r"), CPU)


def test_url_checkpoint_is_downloaded_once_into_the_cache(tiny, tmp_path, monkeypatch):
    """A URL is fetched into $ITMBENCH_CHECKPOINTS once (a file:// URL here: no network)."""
    src = tmp_path / "remote" / "negclip.pth"
    src.parent.mkdir()
    torch.save({"state_dict": tiny.state_dict()}, src)
    monkeypatch.setenv("ITMBENCH_CHECKPOINTS", str(tmp_path / "cache"))
    assert _same_as(build_encoder(_spec(pretrained=src.as_uri()), CPU), tiny)
    cached = list((tmp_path / "cache").rglob("negclip.pth"))
    assert len(cached) == 1
    src.unlink()  # the second build reads the cache, not the URL
    assert _same_as(build_encoder(_spec(pretrained=src.as_uri()), CPU), tiny)


def test_hf_hub_style_model_folder_through_local_dir(tiny, tmp_path):
    """An open_clip model repository (open_clip_config.json + weights), read from a local folder."""
    folder = tmp_path / "repo"
    folder.mkdir()
    cfg = json.loads((openclip.CONFIG_DIR / "itm-clip-tiny.json").read_text())
    (folder / "open_clip_config.json").write_text(json.dumps({"model_cfg": cfg, "preprocess_cfg": {}}))
    torch.save(tiny.state_dict(), folder / "open_clip_pytorch_model.bin")
    spec = model_spec("m", {"family": "open_clip", "arch": f"local-dir:{folder}", "quick_gelu": True})
    assert _same_as(build_encoder(spec, CPU), tiny)


def test_a_checkpoint_of_another_architecture_is_named_with_the_mismatch(tiny, tmp_path):
    path = tmp_path / "tiny.pt"
    torch.save(tiny.state_dict(), path)
    spec = model_spec("vit", {"family": "open_clip", "arch": "ViT-B-32", "pretrained": str(path)})
    with pytest.raises(ValueError, match=r"models.vit: .*tiny.pt does not fit the architecture: .*shape mismatch"):
        build_encoder(spec, CPU)
    junk = tmp_path / "junk.pt"
    torch.save({"epoch": 3, "note": "no weights"}, junk)
    with pytest.raises(ValueError, match="junk.pt: expected a state dict of tensors"):
        checkpoint_state_dict(junk)


def test_init_needs_a_trainer_and_another_model():
    with pytest.raises(ValueError, match="`init: clip` needs a `trainer`"):
        model_spec("m", {"family": "open_clip", "arch": "itm-clip-tiny", "init": "clip"})
    with pytest.raises(ValueError, match="`init` names the model itself"):
        model_spec("m", {"family": "open_clip", "arch": "itm-clip-tiny", "trainer": "negclip", "init": "m"})
