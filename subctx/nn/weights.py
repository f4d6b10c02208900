"""Weights as safetensors chunks of at most 16 MiB (so that any file fits through size-limited
transfers): the torch backend reads a bundle's `model-NNN.safetensors`, the trainer writes them
and its checkpoints with the same functions."""

from __future__ import annotations

from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from subctx.textio import current_umask

CHUNK_BYTES = 16 * 1024 * 1024 - 64 * 1024  # leave room for the safetensors header


def save_chunked(tensors: dict[str, torch.Tensor], folder: Path, prefix: str,
                 max_bytes: int = CHUNK_BYTES) -> list[str]:
    """Write tensors into <prefix>-NNN.safetensors files; a tensor too big for one file is cut
    along its first dimension into parts named 'name#i'."""
    pieces: list[tuple[str, torch.Tensor]] = []
    for name, tensor in tensors.items():
        tensor = tensor.detach().cpu().contiguous()
        size = tensor.numel() * tensor.element_size()
        if size <= max_bytes or tensor.dim() == 0:
            pieces.append((name, tensor))
            continue
        rows = max(1, max_bytes // max(1, size // tensor.shape[0]))
        for i, part in enumerate(torch.split(tensor, rows)):
            pieces.append((f"{name}#{i}", part.clone()))
    # first fit, largest first: as few files as the sizes allow (a transfer limits their number)
    files: list[dict[str, torch.Tensor]] = []
    used: list[int] = []
    for name, tensor in sorted(pieces, key=lambda p: -p[1].numel() * p[1].element_size()):
        size = tensor.numel() * tensor.element_size()
        slot = next((i for i, u in enumerate(used) if u + size <= max_bytes), None)
        if slot is None:
            files.append({})
            used.append(0)
            slot = len(files) - 1
        files[slot][name] = tensor
        used[slot] += size
    if not files:
        files.append({})
    names = []
    for i, chunk in enumerate(files):
        name = f"{prefix}-{i:03d}.safetensors"
        save_file(chunk, str(folder / name))
        # safetensors writes owner-only files: give them the mode any new file gets
        (folder / name).chmod(0o666 & ~current_umask())
        names.append(name)
    return names


def load_chunked(folder: Path, prefix: str) -> dict[str, torch.Tensor]:
    merged: dict[str, torch.Tensor] = {}
    parts: dict[str, list[tuple[int, torch.Tensor]]] = {}
    for file in sorted(folder.glob(f"{prefix}-*.safetensors")):
        for name, tensor in load_file(str(file)).items():
            if "#" in name:
                base, index = name.rsplit("#", 1)
                parts.setdefault(base, []).append((int(index), tensor))
            else:
                merged[name] = tensor
    for base, chunks in parts.items():
        merged[base] = torch.cat([t for _, t in sorted(chunks, key=lambda c: c[0])])
    return merged
