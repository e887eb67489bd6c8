"""Benchmarks: construction in the world and the canonical schema of each."""
