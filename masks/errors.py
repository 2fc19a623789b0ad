"""Exceptions of the `masks` package."""


class BackendUnavailableError(RuntimeError):
    """A named backend cannot run here (package missing, no GPU, wrong device); says why."""
