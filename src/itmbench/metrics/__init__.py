"""Pure metric functions: accuracies, retrieval ranks, intervals, correlations."""
