"""Each paper's published values, tables, figures and claims as functions of results."""
