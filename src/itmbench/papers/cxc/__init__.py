"""Published values, tables and figures of the cxc paper."""
