"""Model registry: one spec per model, one factory, one scoring interface."""
