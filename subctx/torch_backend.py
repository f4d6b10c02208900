"""The old import path of the PyTorch backend (subctx.backends.pytorch), kept for one change."""

from subctx.backends.pytorch import TorchBackend as TorchEngine

__all__ = ["TorchEngine"]
