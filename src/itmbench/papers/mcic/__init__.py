"""Published values, tables and figures of the mcic paper."""
