"""Tables, notebooks and the report index."""
