"""What a new run takes from elsewhere: its tokenizer, and (`--init-from`) another run's
weights and step count; and what a run folder records of itself and of the runs it began
from (read by the model card)."""

from __future__ import annotations

import json
from pathlib import Path

import torch

from subctx.bundle import SpecialTokens
from subctx_train.checkpoint import (
    list_checkpoints,
    load_final,
    load_model_state,
    read_meta,
    write_atomically,
)
from subctx_train.config import TrainConfig
from subctx_train.data import DataError, Document
from subctx_train.tokenizer import (
    check_tokenizer,
    min_vocab_size,
    tokenizer_sentences,
    train_tokenizer,
)


def ensure_tokenizer(run_dir: Path, docs: list[Document], cfg: TrainConfig,
                     init_from: Path | None = None, spm_model: Path | None = None) -> Path:
    """The run's SentencePiece model: the init run's when fine-tuning, a given one
    (`spm_model`), else trained here on the training documents. A given tokenizer is checked
    (a SentencePiece model made by subctx: check_tokenizer) before it is copied into the run,
    so that a failed start leaves none behind; with `init_from` too, it must be the init
    run's own, or that one with pieces appended (add_user_pieces: its ids unchanged, the new
    pieces' embedding rows start fresh), else a DataError: the weights go with their ids."""
    path = Path(run_dir) / "spm.model"
    source = spm_model
    if init_from is not None:
        source = _init_tokenizer(init_from, spm_model)
        if spm_model is None and path.exists() and _extends(source.read_bytes(),
                                                            path.read_bytes()):
            source = path  # begun with --spm (pieces appended), resumed without it
    if source is not None:
        model = Path(source).read_bytes()
        check_tokenizer(model, source)
        if not path.exists():
            write_atomically(path, lambda tmp: tmp.write_bytes(model))  # whole or not at all
        elif path.read_bytes() != model:
            raise DataError(f"{run_dir} has a different tokenizer ({path}) than {source}: a "
                            "run keeps the tokenizer it began with (resume it without --spm, "
                            "or give a new --run)")
    if not path.exists():
        fewest = min_vocab_size(SpecialTokens())  # tiny presets ask fewer: they get this many
        train_tokenizer(tokenizer_sentences(docs, seed=cfg.seed), path,
                        vocab_size=max(cfg.vocab_size, fewest))
    return path


def _init_tokenizer(init_from: Path, spm_model: Path | None) -> Path:
    """The tokenizer a run started from `init_from` uses: the init run's, or `spm_model` where
    it is that one (the same bytes) or that one with pieces appended."""
    init_dir = init_run_dir(init_from)
    theirs = init_dir / "spm.model"
    if not theirs.exists():
        raise FileNotFoundError(f"--init-from {init_from}: no tokenizer ({theirs}) to go on "
                                "with")
    if spm_model is None or Path(spm_model).read_bytes() == theirs.read_bytes():
        return theirs
    if _extends(theirs.read_bytes(), Path(spm_model).read_bytes()):
        return Path(spm_model)
    raise DataError(f"--spm {spm_model} is not the tokenizer of the --init-from run "
                    f"({theirs}): its weights go with their token ids; leave out --spm (or "
                    "give that run's tokenizer, with pieces appended at most)")


def _extends(before: bytes, after: bytes) -> bool:
    """Whether tokenizer `after` is `before` with pieces appended (add_user_pieces): every
    piece of `before` at the same id, and more."""
    import sentencepiece as spm

    if not after.startswith(before) or len(after) == len(before):
        return False
    try:
        old = spm.SentencePieceProcessor(model_proto=before)
        new = spm.SentencePieceProcessor(model_proto=after)
    except RuntimeError:
        return False
    size = old.get_piece_size()
    return new.get_piece_size() > size and all(
        old.id_to_piece(i) == new.id_to_piece(i) for i in range(size))


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


# -- a run's records ---------------------------------------------------------------------------
def run_record(run_dir: Path) -> dict:
    """A run's config.json ({} where it has none)."""
    config = Path(run_dir) / "config.json"
    return json.loads(config.read_text()) if config.exists() else {}


def training_minutes(records: list[dict]) -> float:
    """Wall-clock minutes over all sessions of a run (each resumed session restarts the
    clock, so a drop in elapsed_min starts a new session)."""
    total, last = 0.0, 0.0
    for record in records:
        if record["elapsed_min"] < last:
            total += last
        last = record["elapsed_min"]
    return total + last


def run_progress(run_dir: Path) -> dict:
    """Steps, epochs, wall-clock minutes and last dev scores of a run, from metrics.jsonl."""
    metrics = Path(run_dir) / "metrics.jsonl"
    records = ([json.loads(x) for x in metrics.read_text().splitlines() if x.strip()]
               if metrics.exists() else [])
    if not records:
        return {}
    return {"steps": records[-1]["step"], "epochs": records[-1]["epoch"],
            "minutes": round(training_minutes(records), 1),
            "precision": records[-1].get("precision", "fp32"),
            "final_dev": {k: v for k, v in records[-1].items() if k.startswith("dev_")}}


def stage_data(data: dict | None) -> dict:
    return {k: data[k] for k in ("pairs", "synthetic_pairs") if k in data} if data else {}


def pretraining_stages(run_dir: Path) -> list[dict]:
    """The runs this one started from (`--init-from`), earliest first, each with its
    hardware, pair counts and progress: as the run recorded them when it began (so the chain
    travels with the folder: a GPU session's run starts from weights an earlier session sent
    back, at a path that exists only there), else followed back through the folders."""
    record = run_record(run_dir)
    if "pretraining" in record and not record.get("unbundled_from"):
        return record["pretraining"]
    return chain_from(record.get("init_from"), {Path(run_dir).resolve()})


def chain_from(init_from: str | Path | None, seen: set[Path] | None = None) -> list[dict]:
    """The stages up to and including the run `init_from` (a run folder or a checkpoint of
    one): each run's own, then those it recorded or started from; a run unbundled from a
    shipped model ends the chain with the stages that model's card recorded."""
    stages, seen = [], set(seen or ())
    while init_from:
        init_dir = init_run_dir(Path(init_from))
        record = run_record(init_dir)
        if init_dir.resolve() in seen or not record:
            break
        seen.add(init_dir.resolve())
        stages.insert(0, {"run": str(init_dir), "architecture": record["train"].get(
            "architecture"), "device": record.get("hardware"), **stage_data(record.get("data")),
            **run_progress(init_dir)})
        if record.get("unbundled_from"):
            stages[:0] = [{"device": record.get("hardware"), **stage}
                          for stage in record.get("pretraining") or []]
            break
        if "pretraining" in record:  # recorded when that run began
            stages[:0] = record["pretraining"]
            break
        init_from = record.get("init_from")
    return stages
