"""Image-text retrieval on the world (the Karpathy-split recall every paper reports beside its own task)."""
