"""Published values, tables and figures of the bivlc paper."""
