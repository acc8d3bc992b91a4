"""Question answering over research-paper abstracts, with citations to the papers that say it."""

__version__ = "0.1.0"
