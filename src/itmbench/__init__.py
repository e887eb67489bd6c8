"""itmbench: regenerate five image-text matching evaluation papers from one DAG."""

__version__ = "0.1.0"
