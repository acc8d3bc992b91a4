"""The failures a user can cause or meet. Each carries a one-line message the CLI prints as is."""


class RagError(Exception):
    """Base class: a failure with a message meant for the user (one line, no traceback)."""

    exit_code = 1


class InputError(RagError):
    """A file or argument the user gave is unusable (bad format, missing field, duplicate id...)."""

    exit_code = 2


class StoreError(RagError):
    """The store cannot be opened or used as asked (wrong embedding model, unreachable server...)."""


class NotFoundError(RagError):
    """A paper id that is not in the store."""


class LLMError(RagError):
    """The configured LLM endpoint failed (unreachable, timed out, or answered with an error)."""


class ModelError(StoreError):
    """A packaged model (the reranker) is missing, corrupt, or does not match its model card."""
