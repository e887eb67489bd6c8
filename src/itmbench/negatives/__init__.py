"""Hard negatives: SugarCrepe-style caption edits and the image-generator interface (BiVLC)."""
