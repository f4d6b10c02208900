"""User-facing errors: each carries one line that the CLI prints instead of a traceback."""


class SubctxError(Exception):
    """Base class for problems the user can fix (bad input, missing model...)."""


class InputError(SubctxError):
    """A subtitle file could not be read or understood."""


class BundleError(SubctxError):
    """A model bundle is missing, incomplete or of an unknown format."""
