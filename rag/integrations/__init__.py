"""Adapters that expose `rag.Papers` to other frameworks (llama_index: `rag.integrations.llama_index`).

Each is a thin client of `Papers` and imports its framework only when imported itself, so `import rag` never
needs them installed.
"""
