"""What a new run takes from elsewhere: its tokenizer, and (`--init-from`) another run's
weights and step count."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import torch

from subctx_train.checkpoint import list_checkpoints, load_final, load_model_state, read_meta
from subctx_train.config import TrainConfig
from subctx_train.data import Document
from subctx_train.tokenizer import tokenizer_sentences, train_tokenizer


def ensure_tokenizer(run_dir: Path, docs: list[Document], cfg: TrainConfig,
                     init_from: Path | None = None, spm_model: Path | None = None) -> Path:
    """The run's SentencePiece model: the init run's when fine-tuning, a given one
    (`spm_model`), else trained here on the training documents."""
    path = run_dir / "spm.model"
    source = init_run_dir(init_from) / "spm.model" if init_from is not None else spm_model
    if source is not None:
        if not path.exists():
            shutil.copyfile(source, path)
        elif path.read_bytes() != source.read_bytes():
            raise ValueError(f"{run_dir} has a different tokenizer than {source}")
    if not path.exists():
        train_tokenizer(tokenizer_sentences(docs, seed=cfg.seed), path,
                        vocab_size=cfg.vocab_size)
    return path


def init_run_dir(init_from: Path) -> Path:
    """The run folder of `init_from` (a run folder or one of its step-* checkpoints)."""
    init_from = Path(init_from)
    return init_from.parent.parent if init_from.name.startswith("step-") else init_from


def _init_checkpoint(init_from: Path) -> Path | None:
    """The checkpoint folder whose step a fine-tuning run starts from (None for a collected
    run, which holds only final weights and metrics)."""
    if init_from.name.startswith("step-"):
        return init_from
    found = list_checkpoints(init_from)
    if found:
        return found[-1]
    if (init_from / "metrics.jsonl").exists() and load_final(init_from) is not None:
        return None
    raise FileNotFoundError(f"{init_from}: no checkpoints to start from")


def init_step(init_from: Path) -> int:
    """The step count a run started from `init_from` goes on from."""
    init_from = Path(init_from)
    checkpoint = _init_checkpoint(init_from)
    if checkpoint is None:
        lines = (init_from / "metrics.jsonl").read_text().splitlines()
        return json.loads([x for x in lines if x.strip()][-1])["step"]
    return read_meta(checkpoint)["step"]


def initial_weights(init_from: Path) -> tuple[dict[str, torch.Tensor], int]:
    """Weights and step count to start a fine-tuning run from: a checkpoint folder, or a run
    folder's final (averaged) weights with the step of its last checkpoint."""
    init_from = Path(init_from)
    checkpoint = _init_checkpoint(init_from)
    final = load_final(init_from) if checkpoint != init_from else None
    if final is None:
        return load_model_state(checkpoint), read_meta(checkpoint)["step"]
    return final, init_step(init_from)
