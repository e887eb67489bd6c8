"""Published values, tables and figures of the eccv paper."""
