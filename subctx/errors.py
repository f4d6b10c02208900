"""User-facing errors: each carries one line that the CLI prints instead of a traceback."""


class SubctxError(Exception):
    """Base class for problems the user can fix (bad input, missing model...)."""


class InputError(SubctxError):
    """A subtitle file could not be read or understood; `path` names it when the message
    alone would not (e.g. the translation, not the English, of a review)."""

    def __init__(self, message: str, path=None):
        super().__init__(message)
        self.path = path


class BundleError(SubctxError):
    """A model bundle is missing, incomplete or of an unknown format."""
