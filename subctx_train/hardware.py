"""The machine a run trains on: bf16 support, the CPU's allocator, GPU sharing, and its
description for the model card."""

from __future__ import annotations

import os
from pathlib import Path

import torch


def use_bf16(precision: str, device: torch.device) -> bool:
    """Whether to train under bf16 autocast: always on CUDA, on CPU only where bf16 matrix
    products run natively (there they are several times faster than float32)."""
    if precision != "auto":
        return precision == "bf16"
    if device.type == "cuda":
        return True
    if device.type != "cpu":
        return False
    try:
        return bool(torch.cpu._is_amx_tile_supported() or torch.cpu._is_avx512_bf16_supported())
    except AttributeError:  # a torch without these probes: stay exact
        return False


def keep_freed_memory() -> None:
    """Tell glibc's malloc to reuse freed memory instead of handing it back to the OS.

    Each step allocates and frees buffers of ~100 MB (logits over the vocabulary); by default
    glibc maps them fresh every time, and on a VM the page faults cost up to half the step.
    Heap-only allocation with no trimming made CPU training 1.2-3x faster here."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
        if libc is None or not hasattr(libc, "mallopt"):
            return
    except OSError:  # not glibc (macOS, musl): nothing to tune
        return
    m_trim_threshold, m_top_pad, m_mmap_max = -1, -2, -4
    libc.mallopt(m_mmap_max, 0)
    libc.mallopt(m_trim_threshold, 2 ** 31 - 1)
    libc.mallopt(m_top_pad, 256 << 20)


def no_kernel_cache() -> None:
    """Keep oneDNN from caching a CPU kernel per tensor shape (unless the user set
    ONEDNN_PRIMITIVE_CACHE_CAPACITY): every batch of token-bucketed training has new shapes,
    so its default cache of 1,024 kernels and their scratch memory only grew. 60 CPU updates
    on 84k examples peaked at 8.4-9.1 GB with it and 5.0-5.9 GB without, at the same speed
    (docs/recipe.md, "The trainer in brief"). Read when oneDNN makes its first kernel: call
    before the first step."""
    os.environ.setdefault("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "0")


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str | None:
    """The CPU's model name, where the system says it."""
    try:
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def describe_hardware(device: torch.device, world: int = 1) -> str:
    """The machine a run trains on, as the model card states it."""
    if device.type == "cuda":
        name = torch.cuda.get_device_name(device)
        return f"{world} × {name}" if world > 1 else name
    cores = os.cpu_count() or 1
    model = cpu_model()
    return f"{cores} CPU core{'s' if cores > 1 else ''}{f' ({model})' if model else ''}, no GPU"


def share_gpu(device: torch.device) -> None:
    """Runs side by side on one GPU (`gpu_recipe.sh rows`): `SUBCTX_GPU_SHARE` caps this
    process's share of the GPU memory, so that the caching allocator frees its cache instead of
    starving the others, and keeps attention off cuDNN, whose workspace then fails to allocate."""
    share = os.environ.get("SUBCTX_GPU_SHARE")
    if device.type != "cuda" or not share:
        return
    torch.cuda.set_per_process_memory_fraction(float(share), device.index or 0)
    torch.backends.cuda.enable_cudnn_sdp(False)


def resolve_device(name: str) -> torch.device:
    """`auto`: this process's CUDA device where there is one, else the CPU."""
    if name == "auto":
        name = f"cuda:{torch.cuda.current_device()}" if torch.cuda.is_available() else "cpu"
    return torch.device(name)
