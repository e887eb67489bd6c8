"""Training loops and losses for the baselines."""
