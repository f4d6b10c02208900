"""Serving backends: one registry from the manifest's `backend` name to the class that runs it
and the files its bundle holds.

Importing this registry imports neither CTranslate2 nor torch; `open_backend` imports the one a
bundle needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from pathlib import Path

from subctx.bundle import MANIFEST, Bundle, load_bundle
from subctx.contract import BATCH_SIZE
from subctx.errors import BundleError


@dataclass(frozen=True)
class BackendSpec:
    name: str
    backend: str  # the class, "module:Class", imported on use
    files: tuple[str, ...]  # what its bundles hold besides the manifest and tokenizers

    def open(self, bundle: Bundle, device: str, compute_type: str, threads: int,
             batch_size: int = BATCH_SIZE):
        module, cls = self.backend.split(":")
        return getattr(import_module(module), cls)(bundle, device=device,
                                                    compute_type=compute_type, threads=threads,
                                                    batch_size=batch_size)


BACKENDS: dict[str, BackendSpec] = {b.name: b for b in (
    BackendSpec("ctranslate2", "subctx.backends.ct2:CTranslate2Backend",
                ("model.bin", "config.json")),
    BackendSpec("torch", "subctx.backends.pytorch:TorchBackend", ("model.json",)),
)}
DEVICES = ("auto", "cpu", "cuda")
# CTranslate2's weight types (the PyTorch backend computes in float32 whatever is asked)
COMPUTE_TYPES = ("auto", "default", "int8", "int8_float32", "int8_float16", "int8_bfloat16",
                 "int16", "float16", "bfloat16", "float32")


def backend_for(bundle: Bundle) -> BackendSpec:
    """The backend a bundle names, once its files are there (BundleError, one line, if not)."""
    name = bundle.manifest.backend
    if name not in BACKENDS:
        raise BundleError(f"unknown backend '{name}' in {MANIFEST} (this subctx runs "
                          f"{', '.join(BACKENDS)})")
    missing = [f for f in BACKENDS[name].files if not bundle.file(f).is_file()]
    if missing:
        raise BundleError(f"{bundle.path}: incomplete bundle, missing {', '.join(missing)}")
    return BACKENDS[name]


def open_backend(bundle: Bundle | str | Path, device: str = "auto", compute_type: str = "auto",
                 threads: int = 0, batch_size: int = BATCH_SIZE):
    """The backend a bundle's manifest names, with the model loaded; a CTranslate2 bundle that
    CTranslate2 cannot run here (not installed; or on `cuda`, no CUDA device or libraries for
    it) is served by PyTorch where PyTorch can (`served_instead` says why), else the error.
    `batch_size`: requests it searches or scores together unless a call says otherwise."""
    bundle = bundle if isinstance(bundle, Bundle) else load_bundle(bundle)
    spec = backend_for(bundle)
    try:
        return spec.open(bundle, device, compute_type, threads, batch_size)
    except BundleError as problem:
        if spec.name != "ctranslate2" or not _torch_can_serve(device, problem):
            raise
        backend = BACKENDS["torch"].open(bundle, device, compute_type, threads, batch_size)
        backend.served_instead = f"CTranslate2 cannot run it here ({problem})"
        return backend


def _torch_can_serve(device: str, problem: BundleError) -> bool:
    """Whether PyTorch can serve a CTranslate2 bundle that CTranslate2 could not: on `cuda`
    where torch sees a GPU, elsewhere only where ctranslate2 is missing altogether."""
    try:
        import torch
    except ImportError:
        return False
    if device == "cuda":
        return torch.cuda.is_available()
    from subctx.backends.ct2 import CTranslate2Missing

    return isinstance(problem, CTranslate2Missing)
