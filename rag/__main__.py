"""`python -m rag` is the `rag` command."""

from .cli import main

main()
