"""Published values, tables and figures of the bison paper."""
