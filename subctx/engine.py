"""The old import path of the serving backends (subctx.backends), kept for one change."""

from subctx.backends import open_backend as open_engine
from subctx.backends.ct2 import CTranslate2Backend as Engine
from subctx.contract import AttentionMap, Hypothesis, Request, Translation

__all__ = ["AttentionMap", "Engine", "Hypothesis", "Request", "Translation", "open_engine"]
