"""itmbench: regenerate five image-text matching evaluation papers from one DAG."""

__version__ = "0.1.0"

# Every log line of a command (`itmbench.cli.run`) and of a process a command starts
LOG_FORMAT = "%(asctime)s %(name)s %(levelname)s %(message)s"
