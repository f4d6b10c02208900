"""Checkpoints as folders of safetensors chunks of at most 16 MiB (so any file fits through
size-limited transfers), plus a JSON file of everything else."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file

from subctx.errors import SubctxError
from subctx.nn.weights import load_chunked, save_chunked


class RunError(SubctxError, ValueError):
    """A run, its weights or a folder written from it that cannot be used as asked: one line
    (`subctx-train`'s main() prints a SubctxError without a traceback; the commands that turn
    a ValueError into a usage error take it as one)."""


class NothingTrained(RunError):
    """A run without any checkpoint: it has no weights to make final ones of."""


def write_atomically(path: Path, write: Callable[[Path], object]) -> Path:
    """`write(tmp)` into a temporary file beside `path`, then rename it to `path`: a reader
    (or a run killed meanwhile) sees the old file or the new one, never half of one."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def check_output_folder(out: Path, marker: str) -> Path:
    """`out` as a folder a writer may replace whole: absent, empty, or one it wrote before
    (it holds `marker`); RunError for a file or a folder of something else."""
    out = Path(out)
    if out.is_symlink() and not out.exists():
        raise RunError(f"{out} is a link to nothing: give another --out")
    if out.exists() and not out.is_dir():
        raise RunError(f"{out} exists and is not a folder: give another --out")
    if out.is_dir() and not (out / marker).is_file() and any(out.iterdir()):
        raise RunError(f"{out} is a folder of something else (not empty, no {marker}): give "
                       "a new or empty folder, it is not replaced")
    return out


@contextlib.contextmanager
def replaced_folder(out: Path, marker: str) -> Iterator[Path]:
    """A new, empty folder beside `out` to write into; once the block completes it replaces
    `out` whole (no file of what was there before survives), and if the block fails it goes
    and `out` stays as it was. `out` is checked first (`check_output_folder`); a link to a
    folder has that folder replaced."""
    out = Path(os.path.realpath(check_output_folder(out, marker)))  # a name to put beside
    out.parent.mkdir(parents=True, exist_ok=True)
    token = uuid.uuid4().hex[:8]
    staged = out.with_name(f".{out.name}.{token}.new")
    staged.mkdir()
    try:
        yield staged
        check_output_folder(out, marker)  # unchanged meanwhile
        if out.exists():
            old = out.with_name(f".{out.name}.{token}.old")
            out.rename(old)
            try:
                staged.rename(out)
            except BaseException:
                old.rename(out)
                raise
            shutil.rmtree(old, ignore_errors=True)
        else:
            staged.rename(out)
    finally:
        shutil.rmtree(staged, ignore_errors=True)  # gone unless it failed


def _flatten_optimizer(state: dict[str, Any]) -> tuple[dict[str, torch.Tensor], dict]:
    tensors, meta = {}, {"param_groups": state["param_groups"], "state": {}}
    for pid, values in state["state"].items():
        meta["state"][str(pid)] = {}
        for key, value in values.items():
            if torch.is_tensor(value):
                tensors[f"{pid}.{key}"] = value
                meta["state"][str(pid)][key] = "tensor"
            else:
                meta["state"][str(pid)][key] = value
    return tensors, meta


def _unflatten_optimizer(tensors: dict[str, torch.Tensor], meta: dict) -> dict[str, Any]:
    state = {}
    for pid, values in meta["state"].items():
        state[int(pid)] = {k: tensors[f"{pid}.{k}"] if v == "tensor" else v
                           for k, v in values.items()}
    return {"state": state, "param_groups": meta["param_groups"]}


def save_checkpoint(folder: Path, model: torch.nn.Module, optimizer: torch.optim.Optimizer | None,
                    meta: dict[str, Any]) -> Path:
    """Write atomically: into folder.tmp, then rename."""
    folder = Path(folder)
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    save_chunked(model.state_dict(), tmp, "model")
    if optimizer is not None:
        tensors, opt_meta = _flatten_optimizer(optimizer.state_dict())
        save_chunked(tensors, tmp, "optimizer")
        meta = {**meta, "optimizer": opt_meta}
    (tmp / "meta.json").write_text(json.dumps(meta, indent=1), encoding="utf-8")
    shutil.rmtree(folder, ignore_errors=True)
    tmp.rename(folder)
    return folder


def read_meta(folder: Path) -> dict[str, Any]:
    return json.loads((Path(folder) / "meta.json").read_text(encoding="utf-8"))


def load_model_state(folder: Path) -> dict[str, torch.Tensor]:
    return load_chunked(Path(folder), "model")


def load_optimizer_state(folder: Path) -> dict[str, Any]:
    meta = read_meta(folder)
    return _unflatten_optimizer(load_chunked(Path(folder), "optimizer"), meta["optimizer"])


def average_states(folders: list[Path]) -> dict[str, torch.Tensor]:
    """Element-wise mean of the model weights of several checkpoints."""
    total: dict[str, torch.Tensor] = {}
    for folder in folders:
        for name, tensor in load_model_state(folder).items():
            total[name] = total.get(name, 0) + tensor.double()
    return {name: (t / len(folders)).float() for name, t in total.items()}


def list_checkpoints(run_dir: Path) -> list[Path]:
    """A run's complete checkpoint folders (checkpoints/step-*), oldest first."""
    found = [p for p in (Path(run_dir) / "checkpoints").glob("step-*")
             if (p / "meta.json").exists()]
    return sorted(found, key=lambda p: int(p.name.split("-")[1]))


SCALE = "@scale"  # suffix of the per-row scales of an int8-collected matrix


def quantize_int8(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Matrices as int8 with one float32 scale per row (symmetric, absmax), the rest (biases,
    norms) in bfloat16: a run's weights in about a quarter of float32's room, for a model
    whose bf16 weights would not fit what a device call sends back. `dequantize` reverses it
    (the same rounding a CTranslate2 int8 bundle has)."""
    out: dict[str, torch.Tensor] = {}
    for name, tensor in state.items():
        if not tensor.is_floating_point():
            out[name] = tensor
        elif tensor.dim() < 2:
            out[name] = tensor.to(torch.bfloat16)
        else:
            rows = tensor.float().reshape(tensor.shape[0], -1)
            scale = rows.abs().amax(dim=1).clamp(min=1e-12) / 127.0
            out[name] = torch.round(rows / scale[:, None]).clamp(-127, 127).to(
                torch.int8).reshape(tensor.shape)
            out[name + SCALE] = scale
    return out


def dequantize(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Float32 weights from `quantize_int8`'s (a state without scales passes through)."""
    out = {}
    for name, tensor in state.items():
        if name.endswith(SCALE):
            continue
        scale = state.get(name + SCALE)
        if scale is not None:
            tensor = (tensor.float().reshape(tensor.shape[0], -1) * scale[:, None]).reshape(
                tensor.shape)
        out[name] = tensor.float() if tensor.is_floating_point() else tensor
    return out


RUN_FILES = ("config.json", "spm.model", "metrics.jsonl", "final.json")
OPTIONAL_RUN_FILES = ("training.png",)  # redrawn from metrics.jsonl by `finalize`
MAX_COLLECTED_FILES = 8  # what the device tool sends back


def collect_run(run_dir: Path, out: Path, dtype: str = "bf16", latest: bool = False
                ) -> list[Path]:
    """Copy what `export` needs from a run: final weights cast to `dtype` in <= 16 MiB
    `final-NNN.safetensors` chunks (int8: `quantize_int8`), and the run's config, tokenizer
    and metrics; the plot too while the files stay within MAX_COLLECTED_FILES. `latest`: a
    run still training gives its newest checkpoint instead (a safety copy before a device
    call ends; its final.json says so, and the model card with it)."""
    types = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32,
             "int8": None}
    if dtype not in types:
        raise ValueError(f"dtype is one of {', '.join(types)}")
    run_dir, out = Path(run_dir), Path(out)
    final = run_dir / "final.safetensors"
    found = list_checkpoints(run_dir) if latest and not final.exists() else []
    unfinished = found[-1] if found else None
    if final.exists():
        weights = load_file(str(final))
    elif unfinished is not None:
        weights = load_model_state(unfinished)
    else:
        raise FileNotFoundError(f"{run_dir}: no final.safetensors (has training finished?)"
                                + ("" if latest else "; --latest takes its newest checkpoint"))
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("final-*.safetensors"):  # an earlier safety copy in the same folder
        old.unlink()
    state = quantize_int8(weights) if dtype == "int8" else {
        k: v.to(types[dtype]) if v.is_floating_point() else v for k, v in weights.items()}
    names = save_chunked(state, out, "final")
    copied = [out / n for n in names]
    for name in RUN_FILES:
        if unfinished is not None and name == "final.json":
            (out / name).write_text(json.dumps({
                "averaged_checkpoints": [],
                "weights": f"{unfinished.name}, collected while training went on"}))
            copied.append(out / name)
        elif (run_dir / name).exists():
            shutil.copyfile(run_dir / name, out / name)
            copied.append(out / name)
    if len(copied) > MAX_COLLECTED_FILES:
        raise ValueError(f"{len(copied)} files are more than {MAX_COLLECTED_FILES}: collect "
                         "with a smaller --dtype or a smaller model")
    for name in OPTIONAL_RUN_FILES:
        if (run_dir / name).exists() and len(copied) < MAX_COLLECTED_FILES:
            shutil.copyfile(run_dir / name, out / name)
            copied.append(out / name)
    return copied


def load_final(run_dir: Path) -> dict[str, torch.Tensor] | None:
    """A run's final weights in float32: final.safetensors, or the chunks `collect_run`
    writes (int8 ones dequantised); None if the run has neither."""
    run_dir = Path(run_dir)
    if (run_dir / "final.safetensors").exists():
        state = load_file(str(run_dir / "final.safetensors"))
    elif any(run_dir.glob("final-*.safetensors")):
        state = load_chunked(run_dir, "final")
    else:
        return None
    return dequantize(state)
