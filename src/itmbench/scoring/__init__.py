"""Scoring engines: embedding cache and chunked retrieval ranking."""
