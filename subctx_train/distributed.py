"""DDP under torchrun: which process this is, and decisions all processes take together."""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist


@dataclass
class DistInfo:
    rank: int = 0
    world: int = 1
    distributed: bool = False  # launched by torchrun: DDP, even with one process

    @property
    def main(self) -> bool:
        return self.rank == 0


def init_distributed() -> DistInfo:
    """Join torchrun's process group (NCCL on CUDA, gloo on CPU); a plain launch is one
    process without DDP."""
    if "LOCAL_RANK" not in os.environ or "WORLD_SIZE" not in os.environ:
        return DistInfo()
    dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    rank = dist.get_rank()
    if torch.cuda.is_available():
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    return DistInfo(rank, dist.get_world_size(), distributed=True)


def any_rank(flag: bool, info: DistInfo, device: torch.device) -> bool:
    """True if `flag` is true on any rank (so all ranks take the same decision)."""
    if not info.distributed:
        return flag
    t = torch.tensor([1.0 if flag else 0.0], device=device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return bool(t.item() > 0)
