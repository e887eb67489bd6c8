"""The embedded default source: a generated image-caption world where truth is known."""
