"""subctx: context-aware subtitle translation (English to Russian) on CTranslate2."""

__version__ = "0.1.0"
