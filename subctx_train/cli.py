"""`subctx-train`: train, export and evaluate models."""

from __future__ import annotations

import time
from dataclasses import fields
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from subctx.backends import BACKENDS, DEVICES
from subctx.clihelp import PlainCommand, PlainGroup
from subctx.decoding.scope import SCOPES
from subctx_train.backtranslate import SAMPLINGS
from subctx_train.config import DEFAULT_PRESET, preset_names

Backend = Enum("Backend", {name: name for name in BACKENDS}, type=str)
Scope = Enum("Scope", {name: name for name in SCOPES}, type=str)

app = typer.Typer(add_completion=False, no_args_is_help=True, cls=PlainGroup,
                  help="Train, export and evaluate subctx translation models.")
Device = Enum("Device", {name: name for name in DEVICES}, type=str)
# the options several commands take
DeviceOpt = Annotated[Device, typer.Option(help="Where the model runs.")]
ThreadsOpt = Annotated[int, typer.Option(metavar="N", min=0,
                                         help="CPU threads (0: all cores).")]
BeamOpt = Annotated[int, typer.Option(metavar="N", min=1, help="Beam size.")]
BatchOpt = Annotated[int, typer.Option(metavar="N", min=1, help="Sentences per batch.")]
ContextOpt = Annotated[int | None, typer.Option(
    metavar="K", min=0, help="Context K (default: the model's; at most its most).")]


@app.callback()
def _root() -> None:
    """Train, export and evaluate subctx translation models."""


class ConfigUsageError(typer.BadParameter):
    """A config override or file the trainer cannot use: a usage error, in its own words."""

    def format_message(self) -> str:
        return self.message


def config_panel():
    """The config fields as `train --help` lists them: flag, value, help and the value the
    default preset gives."""
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    from subctx_train.config import TrainConfig, field_help, flag_name, load_config, metavar

    defaults = load_config(DEFAULT_PRESET)
    table = Table(box=None, show_header=False, padding=(0, 1), pad_edge=False, expand=True)
    table.add_column(style="bold cyan", no_wrap=True)
    table.add_column(style="bold yellow", no_wrap=True)
    table.add_column(ratio=1)
    for f in fields(TrainConfig):
        value = getattr(defaults, f.name)
        if isinstance(value, list):
            value = ",".join(map(str, value))
        elif isinstance(value, dict):
            value = ",".join(f"{k}={v}" for k, v in value.items()) or "none"
        elif isinstance(value, bool):
            value = "on" if value else "off"
        flag = f"--[no-]{flag_name(f)}" if metavar(f) == "" else f"--{flag_name(f)}"
        table.add_row(Text(flag), metavar(f),
                      Text(field_help(f)) + Text(f" [default: {value}]", style="dim"))
    return Panel(table, border_style="dim", title_align="left",
                 title=f"Config fields: --FIELD VALUE after DATA (defaults: {DEFAULT_PRESET})")


class TrainCommand(PlainCommand):
    """`train`, whose help also lists the config fields (`--FIELD VALUE`)."""

    def format_help(self, ctx, formatter) -> None:
        super().format_help(ctx, formatter)
        from rich.console import Console
        from typer import rich_utils

        Console(width=rich_utils.MAX_WIDTH, force_terminal=rich_utils.FORCE_TERMINAL,
                color_system=rich_utils.COLOR_SYSTEM).print(config_panel())


@app.command(cls=TrainCommand,
             context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def train(
    ctx: typer.Context,
    data: Annotated[list[str], typer.Argument(
        metavar="DATA...", show_default=False,
        help="Training .jsonl files or folders; any --FIELD VALUE among them sets a config "
             "field (listed below).")],
    run_dir: Annotated[Path, typer.Option(
        "--run", "--run-dir", metavar="DIR",
        help="Run folder (resumes if it exists); under torchrun write --run-dir (torchrun "
             "takes --run for its own --run-path).")],
    dev: Annotated[list[Path] | None, typer.Option(
        metavar="FILE", help="Dev .jsonl for early stopping (repeatable).")] = None,
    preset: Annotated[str | None, typer.Option(
        metavar="NAME", help=f"Size preset (subctx_train/configs): {', '.join(preset_names())}; "
                             f"default {DEFAULT_PRESET}.")] = None,
    config: Annotated[Path | None, typer.Option(
        "--config", metavar="FILE", exists=True, dir_okay=False,
        help="A TOML file of config fields, instead of a preset.")] = None,
    device: Annotated[Device, typer.Option(help="Where to train.")] = Device.auto,
    threads: Annotated[int, typer.Option(
        metavar="N", min=0, help="CPU threads for torch (0: default).")] = 0,
    init_from: Annotated[Path | None, typer.Option(
        exists=True, metavar="RUN",
        help="Start from another run's weights (run folder or step-* checkpoint).")] = None,
    spm_model: Annotated[Path | None, typer.Option(
        "--spm", exists=True, dir_okay=False, metavar="FILE",
        help="Use this SentencePiece model instead of training one (see `subctx-train "
             "tokenizer`).")] = None,
) -> None:
    """Train (or resume) a model; writes checkpoints, metrics.jsonl and training.png.
    The run's config.json records the resolved config."""
    from subctx_train.config import ConfigError, load_config, split_args

    try:
        files, overrides = split_args([*data, *ctx.args])
        if preset and config:
            raise ConfigError("give --preset or --config, not both")
        cfg = load_config(config or preset or DEFAULT_PRESET, overrides)
    except ConfigError as err:
        raise ConfigUsageError(str(err), ctx) from None
    if not files:
        raise ConfigUsageError("no training data: give DATA (.jsonl files or folders)", ctx)
    _check_init_steps(ctx, cfg.max_steps, run_dir, init_from)

    started = time.monotonic()  # what the GPU waits for before the first update: said below
    import torch

    from subctx_train.data import read_documents
    from subctx_train.hardware import keep_freed_memory, no_kernel_cache
    from subctx_train.train import Trainer

    keep_freed_memory()
    no_kernel_cache()
    if threads:
        torch.set_num_threads(threads)
    paths = [Path(f) for f in files]
    trainer = Trainer(cfg, run_dir, read_documents(paths), read_documents(dev or []),
                      device.value,
                      init_from=init_from, spm_model=spm_model, sources=[str(p) for p in paths])
    _check_positions(ctx, cfg, [*trainer.train_examples, *trainer.dev_examples])
    if trainer.info.main:
        typer.echo(f"{len(trainer.train_examples)} training examples, "
                   f"{sum(p.numel() for p in trainer.model.parameters()) / 1e6:.1f}M parameters, "
                   f"filtered: {trainer.filter_counts}; "
                   f"ready in {time.monotonic() - started:.0f} s")
    final = trainer.train()
    if trainer.info.main:
        if final is None or not Path(final).is_file():
            typer.echo(f"error: no final weights were written to {run_dir} (no checkpoint to "
                       f"average: nothing was trained)", err=True)
            raise typer.Exit(1)
        typer.echo(f"final (averaged) weights: {final}")


def _check_init_steps(ctx: typer.Context, max_steps: int, run_dir: Path,
                      init_from: Path | None) -> None:
    """Refuse a fine-tuning run that would train nothing: its step count goes on from the init
    run's (a run folder that already has checkpoints resumes instead: the trainer ignores
    --init-from there)."""
    if init_from is None:
        return
    from subctx_train.checkpoint import list_checkpoints
    from subctx_train.runs import init_step

    if run_dir.is_dir() and list_checkpoints(run_dir):
        return
    start = init_step(init_from)
    if max_steps <= start:
        raise ConfigUsageError(f"--max-steps {max_steps} is not past the init run's step "
                               f"{start}: it would train nothing (fine-tuning counts the init "
                               f"run's steps: give more than {start})", ctx)


def _check_positions(ctx: typer.Context, cfg, examples: list) -> None:
    """Refuse --max-positions shorter than an example needs (a crash mid-training otherwise):
    the current sentence and its </s> (the target: <s> and the sentence); a multi-encoder
    model's context input, <ctx> and each of the last max_k sentences with its </s>, too."""
    from subctx.nn import architecture

    if not examples:
        return
    sentence = max(max(len(ex.src), len(ex.tgt)) + 1 for ex in examples)
    context = 0
    if architecture(cfg.architecture).separate_context and cfg.max_k:
        context = max(1 + sum(len(s) + 1 for s in ex.src_ctx[len(ex.src_ctx) - cfg.max_k:])
                      for ex in examples)
    if max(sentence, context) > cfg.max_positions:
        what = (f"its longest sentence takes {sentence} positions" if sentence >= context else
                f"its longest context ({cfg.max_k} sentences) takes {context} positions")
        raise ConfigUsageError(f"--max-positions {cfg.max_positions} is too few for the data: "
                               f"{what} (give at least {max(sentence, context)})", ctx)


Sampling = Enum("Sampling", {name: name for name in SAMPLINGS}, type=str)


class _Log:
    """Progress as plain lines every `every` seconds (a background run's log file)."""

    def __init__(self, total: int, every: float = 30.0):
        import time

        self.clock, self.total, self.every = time.monotonic, total, every
        self.done, self.start = 0, time.monotonic()
        self.last = self.start

    def __call__(self, n: int) -> None:
        self.done += n
        now = self.clock()
        if now - self.last >= self.every or self.done >= self.total:
            self.last = now
            rate = self.done / max(now - self.start, 1e-9)
            left = (self.total - self.done) / rate if rate else 0
            typer.echo(f"{self.done}/{self.total} sentences, {rate:.0f}/s, "
                       f"{left / 60:.1f} min left", err=True)


def _translate_corpora(inputs: list[Path], model: Path, out: Path, mode: str, beam: int,
                       batch_size: int, device: Device, threads: int,
                       max_segments: int | None = None, sampling: str = "beam",
                       known: list[Path] | None = None, seed: int = 1) -> None:
    import sys

    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TimeRemainingColumn,
    )

    from subctx_train.backtranslate import (
        engine_translate,
        known_keys,
        plan_jobs,
        translate_corpus,
    )
    from subctx_train.data import jsonl_files

    _check_direction(model, mode)
    files = jsonl_files(inputs)
    keys = known_keys(known) if known else set()
    if keys:
        typer.echo(f"{len(keys)} Russian sentences of the parallel data are left out")
    engine = _engine(model, device, threads)
    try:
        translate = engine_translate(engine, SAMPLINGS[sampling], beam, batch_size, seed)
    except ValueError as err:
        raise typer.BadParameter(str(err)) from None
    jobs = plan_jobs(files, out, mode, max_segments, keys)
    total = sum(j.todo for j in jobs)
    chunk = max(2000, 16 * batch_size)  # sentences sorted by length together
    if sys.stderr.isatty():
        with Progress("{task.description}", BarColumn(), MofNCompleteColumn(),
                      TimeRemainingColumn()) as progress:
            task = progress.add_task("sentences", total=total)
            for job in jobs:
                progress.update(task, description=job.source.name)
                translate_corpus(job, translate, mode, lambda n: progress.advance(task, n),
                                 chunk)
    else:
        log = _Log(total)
        for job in jobs:
            typer.echo(f"{job.source.name}: {job.todo} sentences to translate"
                       + (f", {job.dropped} known left out" if job.dropped else ""), err=True)
            translate_corpus(job, translate, mode, log, chunk)
    typer.echo(f"{len(jobs)} files -> {out} ({sum(j.dropped for j in jobs)} segments with a "
               f"known Russian left out)" if mode == "back" else f"{len(jobs)} files -> {out}")


# what each mode translates: back-translation makes English sources of Russian documents;
# self-translation adds an English-to-Russian model's own translation (`mt`)
_DIRECTIONS = {"back": ("ru", "en", "back-translate"), "own": ("en", "ru", "self-translate")}
_LANGUAGES = {"en": "English", "ru": "Russian"}


def _check_direction(model: Path, mode: str) -> None:
    """Refuse a bundle that translates the other way than `mode` needs (its manifest's
    source_lang and target_lang), before any document is read."""
    from subctx.bundle import load_bundle

    source, target, command = _DIRECTIONS[mode]
    manifest = load_bundle(model).manifest
    if (manifest.source_lang, manifest.target_lang) != (source, target):
        def words(a: str, b: str) -> str:
            return f"{_LANGUAGES.get(a, a)} to {_LANGUAGES.get(b, b)} ({a}-{b})"

        raise typer.BadParameter(
            f"{model} translates {words(manifest.source_lang, manifest.target_lang)}: "
            f"{command} needs a bundle that translates {words(source, target)}",
            param_hint="--model")


@app.command("back-translate", cls=PlainCommand)
def back_translate(
    mono: Annotated[list[Path], typer.Argument(
        metavar="FILES...",
        exists=True, help="Russian document .jsonl files or folders (ru-mono).")],
    model: Annotated[Path, typer.Option(
        metavar="DIR", exists=True, help="A Russian-to-English bundle.")],
    out: Annotated[Path, typer.Option(
        metavar="DIR", help="Folder for the synthetic parallel documents.")],
    beam: BeamOpt = 2,
    batch_size: BatchOpt = 64,
    device: DeviceOpt = Device.auto,
    threads: ThreadsOpt = 0,
    max_segments: Annotated[int | None, typer.Option(
        metavar="N",
        help="Per input file: its first whole documents holding this many segments.")] = None,
    sampling: Annotated[Sampling, typer.Option(
        help="How a synthetic source is made (Edunov et al. 2018): "
             + "; ".join(f"{s.name}: {s.help}" for s in SAMPLINGS.values())
             + ".")] = Sampling.beam,
    known: Annotated[list[Path] | None, typer.Option(
        metavar="PATH", exists=True,
        help="Parallel .jsonl files or folders: segments whose Russian has a real English "
             "side there are left out (repeatable).")] = None,
    seed: Annotated[int, typer.Option(metavar="N", help="Seed of sampling and noise.")] = 1,
) -> None:
    """Back-translate monolingual Russian documents line by line, keeping order and timings;
    the output (one .jsonl per input, marked synthetic) trains the English-to-Russian models.
    Re-running goes on where an interrupted run stopped."""
    _translate_corpora(mono, model, out, "back", beam, batch_size, device, threads,
                       max_segments, sampling.value, known, seed)


@app.command("self-translate", cls=PlainCommand)
def self_translate(
    data: Annotated[list[Path], typer.Argument(
        metavar="FILES...", exists=True, help="Parallel document .jsonl files/folders.")],
    model: Annotated[Path, typer.Option(
        metavar="DIR", exists=True, help="An English-to-Russian bundle.")],
    out: Annotated[Path, typer.Option(
        metavar="DIR", help="Folder for the documents with `mt` added.")],
    beam: BeamOpt = 4,
    batch_size: BatchOpt = 64,
    device: DeviceOpt = Device.auto,
    threads: ThreadsOpt = 0,
) -> None:
    """Add a model's own translation (`mt`) to every segment, so that a context model can be
    trained with target-side context as inference gives it (`train --own-context P`)."""
    _translate_corpora(data, model, out, "own", beam, batch_size, device, threads)


@app.command("data-report", cls=PlainCommand)
def data_report(
    data: Annotated[list[Path], typer.Argument(
        metavar="DATA...", exists=True,
        help="Training .jsonl files or folders (real and back-translated).")],
    weights: Annotated[Path | None, typer.Option(
        metavar="FILE", exists=True, dir_okay=False,
        help="A weights file (subctx_train/configs/weights/*.toml).")] = None,
    weight: Annotated[list[str] | None, typer.Option(
        metavar="NAME=W", help="A weight as `train --weight` takes it (after the file's; "
                               "repeatable).")] = None,
    by: Annotated[str, typer.Option(
        metavar="part|corpus|domain",
        help="A row per weighted part of a corpus, per corpus or per domain.")] = "part",
    markdown: Annotated[Path | None, typer.Option(
        metavar="FILE", help="Also write the table as Markdown.")] = None,
    json_file: Annotated[Path | None, typer.Option("--json", metavar="FILE")] = None,
) -> None:
    """Each corpus's pairs (after the trainer's filters) and its share of an epoch's
    examples and target characters under the corpus weights."""
    from subctx_train import data_report as dr
    from subctx_train.data import read_weights

    values = read_weights(weights) if weights else {}
    for item in weight or []:
        name, _, w = item.partition("=")
        try:
            values[name.strip()] = float(w)
        except ValueError:
            raise typer.BadParameter(f"--weight {item}: expected NAME=NUMBER") from None
    if by not in dr.BY:
        raise typer.BadParameter(f"--by {by}: one of {', '.join(dr.BY)}")
    rows, counts = dr.corpus_rows(data, values, by)
    dr.show(rows, f"an epoch's examples by {by}" + (f" ({weights.name})" if weights else ""))
    typer.echo(f"filtered: {counts}")
    if markdown is not None:
        markdown.write_text(dr.markdown(rows) + "\n", encoding="utf-8")
    _json_out(json_file, dr.report(rows, counts, values))


@app.command("weight-flags", cls=PlainCommand)
def weight_flags(
    weights: Annotated[Path, typer.Argument(
        metavar="FILE", exists=True, dir_okay=False, help="A weights file (TOML NAME = W).")],
) -> None:
    """A weights file as `train` options (--weight NAME=W ...), on one line."""
    import shlex

    from subctx_train.data import read_weights, weight_flags

    typer.echo(shlex.join(weight_flags(read_weights(weights))))


@app.command("pack-docs", cls=PlainCommand)
def pack_docs(
    data: Annotated[list[Path], typer.Argument(
        metavar="FILES...", exists=True, help="Document .jsonl files or folders.")],
    out: Annotated[Path, typer.Option(metavar="DIR", help="The pack folder to write.")],
    known: Annotated[list[Path] | None, typer.Option(
        metavar="PATH", exists=True,
        help="Monolingual data: leave out segments whose Russian has a real English side in "
             "these parallel files or folders (repeatable).")] = None,
    skip_done: Annotated[list[Path] | None, typer.Option(
        metavar="PATH", exists=True,
        help="Leave out the documents already in these .jsonl files or folders (e.g. the "
             "back-translations a GPU run brought back).")] = None,
) -> None:
    """Documents as a few plain-text columns (one line per segment, English and Russian apart),
    which xz packs much tighter than the JSONL; `unpack-docs` writes the .jsonl back."""
    from subctx_train.backtranslate import known_keys
    from subctx_train.pack import pack_documents

    keys = known_keys(known) if known else set()
    skip = ({doc.doc_id for doc in _documents(skip_done)} if skip_done else set())
    manifest = pack_documents(data, out, keys, skip)
    for entry in manifest["files"]:
        typer.echo(f"{entry['docs']:7d} docs {entry['segments']:8d} segments  {entry['name']}"
                   + (f"  ({entry['left_out']} known left out)" if entry.get("left_out")
                      else ""))
    typer.echo(f"pack written: {out}")


def _documents(paths: list[Path]):
    from subctx_train.data import read_documents

    return read_documents(paths)


@app.command("unpack-docs", cls=PlainCommand)
def unpack_docs(
    pack: Annotated[Path, typer.Argument(metavar="DIR", exists=True, help="A pack folder.")],
    out: Annotated[Path, typer.Option(metavar="DIR", help="Folder for the .jsonl files.")],
) -> None:
    """Write a pack's documents back as document JSONL, one file per packed file."""
    from subctx_train.pack import unpack_documents

    for path in unpack_documents(pack, out):
        typer.echo(f"wrote {path}")


@app.command(cls=PlainCommand)
def collect(
    run_dir: Annotated[Path, typer.Argument(
        metavar="RUN", help="A finished run folder (with --latest, one still training).")],
    out: Annotated[Path, typer.Option("--out", metavar="DIR", help="Folder to write (e.g. $OUT).")],
    dtype: Annotated[str, typer.Option(
        metavar="bf16|fp16|fp32|int8",
        help="bf16, fp16 or fp32 for the weights; int8: matrices as int8 with a scale per row "
             "(half of bf16's room: a model over ~30M parameters comes back in one call).")
    ] = "bf16",
    latest: Annotated[bool, typer.Option(
        "--latest", metavar="",
        help="A run still training: its newest checkpoint (a safety copy before the device "
             "call ends).")] = False,
) -> None:
    """The final weights of a run in few small files (<= 16 MiB each) with its config,
    tokenizer and metrics: what a GPU machine sends back. `export` reads the folder."""
    from subctx_train.checkpoint import collect_run

    files = collect_run(run_dir, out, dtype, latest=latest)
    for file in files:
        typer.echo(f"{file.stat().st_size / 2**20:7.2f} MiB  {file}")


@app.command(cls=PlainCommand)
def unbundle(
    bundle: Annotated[Path, typer.Argument(
        metavar="BUNDLE", help="A CTranslate2 bundle, e.g. assets/models/en-ru.")],
    out: Annotated[Path, typer.Option("--out", metavar="DIR", help="Run folder to write.")],
    control_tags: Annotated[bool, typer.Option(
        "--control-tags", metavar="",
        help="Add the control tags' pieces (<inf> <frm> <masc> <fem>) that a bundle made "
             "before them lacks, as new tokenizer ids and embedding rows, to fine-tune with "
             "--control-share.")] = False,
) -> None:
    """A shipped bundle's weights (int8 dequantised) as a run folder that `train --init-from`
    starts from: to train the embedded model further where only the bundle travels."""
    from subctx_train.ct2_import import unbundle as read_bundle

    path = read_bundle(bundle, out, control_tags=control_tags)
    typer.echo(f"run folder written: {path}")


@app.command(cls=PlainCommand)
def tokenizer(
    data: Annotated[list[Path], typer.Argument(
        metavar="FILES...", help="Parallel .jsonl files or folders.")],
    out: Annotated[Path, typer.Option(
        "--out", metavar="FILE", help="SentencePiece .model file to write.")],
    mono: Annotated[list[Path] | None, typer.Option(
        metavar="PATH",
        help="Monolingual Russian .jsonl files or folders (ru-mono) to include.")] = None,
    vocab_size: Annotated[int, typer.Option(metavar="N")] = 8000,
    sentences: Annotated[int, typer.Option(
        metavar="N", help="Most sentences to train on.")] = 600_000,
) -> None:
    """Train one shared SentencePiece model (byte fallback, subtitle characters) for several
    runs, e.g. the Russian-to-English back-translation model and the English-to-Russian ones."""
    from subctx_train.tokenizer import build_tokenizer

    count, pieces = build_tokenizer(data, out, mono or [], vocab_size, sentences)
    typer.echo(f"tokenizer trained on {count} sentences ({pieces} pieces) -> {out}")


@app.command(cls=PlainCommand)
def convert(
    out: Annotated[Path, typer.Option("--out", metavar="FILE", help="Document .jsonl to write.")],
    opus_xml: Annotated[Path | None, typer.Option(
        metavar="FILE",
        help="OPUS XCES alignment file (sentence XML files found beside it).")] = None,
    moses: Annotated[tuple[Path, Path, Path] | None, typer.Option(
        metavar="SRC TGT IDS", help="OPUS Moses files: SRC TGT IDS.")] = None,
    srt_pair: Annotated[tuple[Path, Path] | None, typer.Option(
        metavar="EN RU", help="English and Russian .srt of one film.")] = None,
    plain: Annotated[tuple[Path, Path] | None, typer.Option(
        metavar="SRC TGT", help="Line-aligned SRC TGT text (empty line = new document).")] = None,
) -> None:
    """Turn OPUS, .srt pairs or plain text into the document JSONL that `train` reads."""
    from subctx_train import corpora
    from subctx_train.data import write_jsonl

    docs = []
    if opus_xml:
        docs += list(corpora.read_opus_xml(opus_xml))
    if moses and moses[0]:
        docs += list(corpora.read_moses_with_ids(*moses))
    if srt_pair and srt_pair[0]:
        docs.append(corpora.align_srt_pair(*srt_pair))
    if plain and plain[0]:
        docs += list(corpora.read_plain(*plain))
    if not docs:
        raise typer.BadParameter("give at least one of --opus-xml, --moses, --srt-pair, --plain")
    with open(out, "w", encoding="utf-8") as handle:
        write_jsonl(docs, handle)
    typer.echo(f"{len(docs)} documents, {sum(len(d.segments) for d in docs)} segments -> {out}")


@app.command(cls=PlainCommand)
def finalize(
    run_dir: Annotated[Path, typer.Argument(metavar="RUN", help="Run folder.")],
    dev: Annotated[list[Path], typer.Option(metavar="FILE", help="Dev .jsonl files.")],
) -> None:
    """(Re)choose a run's final weights: last checkpoint or an average, by dev NLL."""
    import json

    from subctx_train.config import TrainConfig
    from subctx_train.data import read_documents
    from subctx_train.plots import plot_metrics
    from subctx_train.train import Trainer

    cfg = TrainConfig.from_dict(json.loads((run_dir / "config.json").read_text())["train"])
    trainer = Trainer(cfg, run_dir, [], read_documents(dev), device="cpu", quiet=True)
    typer.echo(json.dumps(trainer.finalize(), indent=1))
    plot_metrics(run_dir / "metrics.jsonl", run_dir / "training.png")


@app.command(cls=PlainCommand)
def export(
    source: Annotated[Path, typer.Argument(
        metavar="RUN", help="A run folder (averaged weights) or a "
                                                "checkpoint folder (step-*).")],
    out: Annotated[Path, typer.Option("--out", metavar="DIR", help="Bundle folder to write.")],
    quantize: Annotated[str | None, typer.Option(
        metavar="TYPE", help="int8, int8_float16, float16...")] = None,
    max_gap: Annotated[float, typer.Option(
        metavar="SECONDS", min=0, help="Context rule default gap.")] = 7.0,
    default_k: Annotated[int | None, typer.Option(
        metavar="K", min=0, show_default=False,
        help="Context K the app uses by default (default: 1, or 0 for a model without "
             "context; at most the bundle's most, --max-k).")] = None,
    max_k: Annotated[int | None, typer.Option(
        metavar="K", min=0,
        help="Most context sentences the app may give a concatenation model (default: the "
             "training's; more can pay: docs/decoding.md, 'How many previous lines').")] = None,
    length_penalty: Annotated[float, typer.Option(
        metavar="X",
        help="Beam-search length penalty the app uses (log-prob / length ** this); tune on "
             "dev.")] = 1.0,
    backend: Annotated[Backend | None, typer.Option(
        help="torch: a PyTorch bundle for any architecture (where ctranslate2 is missing, "
             "e.g. to evaluate on a GPU machine); default: the architecture's.")] = None,
    guard: Annotated[bool, typer.Option(
        "--guard/--no-guard", metavar="",
        help="The app's default for the context guard (bench/context_schedule.py on dev "
             "shows whether it pays for its time with this model).")] = True,
    context_scope: Annotated[Scope, typer.Option(
        help="The app's default for what context may change: all, or agreement (ты/вы, "
             "pronouns, elided verbs) for a model whose other context changes cost chrF on dev.")
    ] = Scope.all,
) -> None:
    """Export to a subctx bundle: CTranslate2 model, SentencePiece, manifest, model card."""
    from subctx.bundle import load_bundle
    from subctx_train.bundle_card import export_run

    if out.exists() and not out.is_dir():
        raise typer.BadParameter(f"{out} is a file, not a folder", param_hint="--out")
    try:
        path = export_run(source, out, quantize, max_gap=max_gap,
                          default_k=1 if default_k is None else default_k,
                          length_penalty=length_penalty, backend=backend and backend.value,
                          guard=guard, scope=context_scope.value, max_k=max_k)
    except ValueError as problem:
        raise typer.BadParameter(str(problem)) from None
    context = load_bundle(path).manifest.context
    if default_k is not None and context.default_k < default_k:
        typer.echo(f"warning: --default-k {default_k} is more than the bundle's most context "
                   f"({context.max_k}): its default is {context.default_k}"
                   + (" (--max-k sets the most)" if max_k is None else ""), err=True)
    typer.echo(f"bundle written: {path}")


def _json_out(path: Path | None, data: dict) -> None:
    import json

    if path is not None:
        path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")


def _engine(model: Path, device: Device, threads: int):
    from subctx.backends import open_backend

    return open_backend(model, device=device.value, compute_type="auto", threads=threads)


def _capped_context(engine, context: int | None) -> int | None:
    """--context K, at most the model's most context sentences (said in a warning line): what
    the model is run with, and what the table and JSON say."""
    if context is not None and context > engine.max_context:
        typer.echo(f"warning: --context {context}: the model reads at most "
                   f"{engine.max_context} context sentence(s); evaluating with "
                   f"{engine.max_context}", err=True)
        return engine.max_context
    return context


@app.command(cls=PlainCommand)
def evaluate(
    model: Annotated[Path, typer.Option(metavar="DIR", help="Bundle folder.")],
    data: Annotated[list[Path], typer.Option(metavar="FILE", help="Document .jsonl file(s).")],
    context: ContextOpt = None,
    max_gap: Annotated[float, typer.Option(metavar="SECONDS", min=0)] = 7.0,
    beam: BeamOpt = 4,
    device: DeviceOpt = Device.auto,
    threads: ThreadsOpt = 0,
    json_file: Annotated[Path | None, typer.Option("--json", metavar="FILE")] = None,
    hypotheses: Annotated[Path | None, typer.Option(
        metavar="DIR", help="Write each file's translations to DIR/NAME.txt (one per line).")
    ] = None,
) -> None:
    """BLEU and chrF of documents translated in order, as the app does."""
    from subctx_train.report import run_bleu, show_table

    engine = _engine(model, device, threads)
    rows = run_bleu(engine, data, _capped_context(engine, context), max_gap, beam,
                    hypotheses=hypotheses)
    show_table("BLEU / chrF", rows)
    _json_out(json_file, {"bleu_chrf": rows})


@app.command("evaluate-contrastive", cls=PlainCommand)
def evaluate_contrastive(
    model: Annotated[Path, typer.Option(metavar="DIR", help="Bundle folder.")],
    voita: Annotated[Path, typer.Option(metavar="DIR", help="Voita et al. release folder.")],
    tests: Annotated[list[str] | None, typer.Option(metavar="NAME", help="Test set names.")] = None,
    context: Annotated[int | None, typer.Option(
        metavar="K", min=0, help="Context K (default and at most: the model's most).")] = None,
    device: DeviceOpt = Device.auto,
    threads: ThreadsOpt = 0,
    json_file: Annotated[Path | None, typer.Option("--json", metavar="FILE")] = None,
) -> None:
    """Accuracy on Voita et al. 2019 contrastive sets, overall and by ctx_dist."""
    from subctx_train.report import run_contrastive, show_table

    engine = _engine(model, device, threads)
    rows = run_contrastive(engine, voita, tests, _capped_context(engine, context))
    show_table("contrastive accuracy", rows)
    _json_out(json_file, {"contrastive": rows})


@app.command("context-nll", cls=PlainCommand)
def context_nll_command(
    runs: Annotated[list[Path], typer.Argument(
        metavar="RUN...", help="Run folders (concatenation models).")],
    data: Annotated[list[Path], typer.Option(
        metavar="FILE",
        help="Dev documents; with `mt` (self-translate's output) for the own-context row.")],
    threads: ThreadsOpt = 0,
    json_file: Annotated[Path | None, typer.Option("--json", metavar="FILE")] = None,
) -> None:
    """Teacher-forced dev NLL of the current sentence with no, the gold and the model's own
    previous translation (what training on gold context leaves unlearnt)."""
    from subctx_train.context_nll import run_context_nll
    from subctx_train.data import read_documents
    from subctx_train.report import show_table

    docs = read_documents(data)
    rows = []
    for run in runs:
        try:
            scores = run_context_nll(run, docs, threads)
        except ValueError as err:
            typer.echo(f"error: {run}: {err}", err=True)
            raise typer.Exit(1) from None
        rows.append({"run": str(run), **{k: round(v, 4) if isinstance(v, float) else v
                                          for k, v in scores.as_dict().items()}})
    show_table("dev NLL of the current sentence, by previous translation", rows)
    _json_out(json_file, {"context_nll": rows})


@app.command("evaluate-ctxpro", cls=PlainCommand)
def evaluate_ctxpro(
    model: Annotated[Path, typer.Option(metavar="DIR", help="Bundle folder.")],
    data: Annotated[Path, typer.Option(metavar="DIR", help="ctxpro folder (evalsets/ + inputs/).")],
    limit: Annotated[int, typer.Option(metavar="N", min=0, help="Items per evalset (0: all).")
                     ] = 0,
    context: ContextOpt = None,
    beam: BeamOpt = 4,
    device: DeviceOpt = Device.auto,
    threads: ThreadsOpt = 0,
    json_file: Annotated[Path | None, typer.Option("--json", metavar="FILE")] = None,
) -> None:
    """ctxpro accuracy per rule: the expected word form in the translated sentence."""
    from subctx_train.report import run_ctxpro, show_table

    engine = _engine(model, device, threads)
    rows = run_ctxpro(engine, data, limit or None, _capped_context(engine, context), beam)
    show_table("ctxpro accuracy", rows)
    _json_out(json_file, {"ctxpro": rows})


@app.command("analyze-attention", cls=PlainCommand)
def analyze_attention(
    run_dir: Annotated[Path, typer.Argument(metavar="RUN", help="A context_encoder run folder.")],
    data: Annotated[list[Path], typer.Option(metavar="FILE", help="Document .jsonl to analyse.")],
    out: Annotated[Path, typer.Option(
        metavar="DIR", help="Folder for the PNG plots and attention.json.")],
    limit: Annotated[int, typer.Option(metavar="N", help="Most examples.")] = 5000,
) -> None:
    """Attention to context per word, by length and by position; one pronoun heatmap."""
    import sentencepiece as spm

    from subctx.nn.context_encoder import ContextEncoderTransformer
    from subctx_train import attention
    from subctx_train.data import read_documents
    from subctx_train.examples import tokenize_documents
    from subctx_train.train import load_final_model

    model, cfg = load_final_model(run_dir)
    if not isinstance(model, ContextEncoderTransformer):
        raise typer.BadParameter(f"{run_dir} is a {cfg.architecture} run, not context_encoder")
    sp = spm.SentencePieceProcessor(model_file=str(run_dir / "spm.model"))
    examples = tokenize_documents(read_documents(data), sp, 1, cfg.max_gap)[:limit]
    ctx_bos = sp.piece_to_id("<ctx>")
    stats = attention.analyse(model, sp, examples, ctx_bos)
    paths = attention.plot(stats, out)
    example = attention.pronoun_example(examples, sp)
    if example is not None:
        paths.append(attention.heatmap(model, sp, example, ctx_bos, out / "attention_heatmap.png"))
    paths.append(attention.write_report(stats, out))
    typer.echo(f"{stats['examples']} examples; mean attention to context words "
               f"{stats['overall']:.3f}; top words: "
               + ", ".join(f"{w} {m:.3f}" for w, m in stats["top10"]))
    for path in paths:
        typer.echo(f"wrote {path}")


@app.command("dev-report", cls=PlainCommand)
def dev_report(
    models: Annotated[list[Path], typer.Argument(metavar="BUNDLE...", help="Bundle folders.")],
    dev_root: Annotated[Path, typer.Option(metavar="DIR", help="shared/data/en-ru/dev")],
    ctxpro_limit: Annotated[int, typer.Option(metavar="N", help="ctxpro items per evalset.")] = 300,
    bleu_limit: Annotated[int | None, typer.Option(
        metavar="N",
        help="Sentences per BLEU set (whole documents, evenly spread; default all).")] = None,
    beam: BeamOpt = 4,
    threads: ThreadsOpt = 0,
    record: Annotated[bool, typer.Option(
        "--record", metavar="",
        help="Write scores into each bundle's manifest and model card.")] = False,
    random_control: Annotated[bool, typer.Option(
        "--random-control", metavar="",
        help="Also run context models with a random context sentence.")] = False,
    json_file: Annotated[Path | None, typer.Option("--json", metavar="FILE")] = None,
    device: Annotated[Device, typer.Option(
        help="cpu (the app's speed), cuda or auto: where the models run.")] = Device.cpu,
    context: Annotated[list[int] | None, typer.Option(
        "--context", metavar="K", min=1,
        help="Also a row with this many context sentences (up to the model's most; "
             "repeatable).")] = None,
) -> None:
    """The dev table for one or more bundles, with context and with --context 0."""
    from subctx.bundle import load_bundle
    from subctx_train.report import full_dev_report, show_dev_table

    for model in models if context else []:
        most = load_bundle(model).manifest.context.max_k
        over = sorted({k for k in context if k > most})
        if over:
            typer.echo(f"warning: {model} reads at most {most} context sentence(s): no row "
                       f"with --context {', '.join(map(str, over))}", err=True)
    report = full_dev_report(models, dev_root, ctxpro_limit, beam, threads, record,
                             random_control, bleu_limit, device.value, context or ())
    show_dev_table(report)
    _json_out(json_file, report)


@app.command("controls-report", cls=PlainCommand)
def controls_report_command(
    model: Annotated[Path, typer.Argument(metavar="BUNDLE", help="A bundle trained with "
                                                                 "control tags.")],
    dev_root: Annotated[Path, typer.Option(metavar="DIR", help="shared/data/en-ru/dev")],
    limit: Annotated[int | None, typer.Option(
        metavar="N", help="friends_dev sentences (whole documents, evenly spread; default all)."
    )] = None,
    ctxpro_limit: Annotated[int, typer.Option(metavar="N", help="ctxpro items per evalset.")] = 300,
    beam: BeamOpt = 4,
    threads: ThreadsOpt = 0,
    device: DeviceOpt = Device.cpu,
    json_file: Annotated[Path | None, typer.Option("--json", metavar="FILE")] = None,
) -> None:
    """What a model's control tags do on dev: each tag forced on friends_dev (the share of lines
    whose forms follow it, chrF), and ctxpro formality untagged, with --formality auto and with
    the oracle tag."""
    from subctx.bundle import load_bundle
    from subctx.decoding import DecodeOptions
    from subctx.errors import SubctxError
    from subctx_train.controls_report import controls_report
    from subctx_train.report import show_table

    try:
        bundle = load_bundle(model)
        engine = _engine(model, device, threads)
        options = DecodeOptions.for_model(bundle.manifest.context, beam_size=beam)
        report = controls_report(engine, bundle.manifest, dev_root, options, limit,
                                 ctxpro_limit or None)
    except SubctxError as problem:
        typer.echo(f"error: {problem}", err=True)
        raise typer.Exit(1) from None
    show_table("control tags forced (friends_dev)", report["forced"])
    if "ctxpro" in report:
        show_table("ctxpro formality", report["ctxpro"])
    _json_out(json_file, report)


@app.command("register-cues", cls=PlainCommand)
def register_cues(
    data: Annotated[list[Path], typer.Argument(
        metavar="DATA...", exists=True, help="Training .jsonl files or folders.")],
    out: Annotated[Path, typer.Option(metavar="FILE", help="Where the weights go "
                                                             "(feature<TAB>weight).")],
    exclude: Annotated[list[str] | None, typer.Option(
        metavar="NAME", help="A file name to leave out (repeatable; ctxpro_dev.jsonl holds "
                             "the ctxpro dev items).")] = None,
    dev_root: Annotated[Path | None, typer.Option(
        metavar="DIR", help="shared/data/en-ru/dev: accuracy on ctxpro formality and "
                            "friends_dev as well.")] = None,
    held: Annotated[int, typer.Option(metavar="N", help="Examples held out of fitting.")] = 5000,
    min_count: Annotated[int, typer.Option(metavar="N", help="Fewest sightings of a "
                                                              "feature.")] = 50,
    epochs: Annotated[int, typer.Option(metavar="N")] = 2,
    lr: Annotated[float, typer.Option(metavar="LR")] = 0.01,
    margin: Annotated[float, typer.Option(
        metavar="M", help="Confidence (distance from 0.5) the report counts as "
                          "sure.")] = 0.25,
    model: Annotated[Path | None, typer.Option(
        metavar="BUNDLE", help="With --dev-root: what the cues could change in this model's "
                               "translations of ctxpro formality.")] = None,
    ctxpro_limit: Annotated[int, typer.Option(metavar="N", help="ctxpro items for "
                                                                "--model.")] = 1500,
    threads: ThreadsOpt = 0,
    json_file: Annotated[Path | None, typer.Option("--json", metavar="FILE")] = None,
) -> None:
    """How much English alone tells of ты and вы: fit a linear model of the cues on training
    documents (subctx_train.register_fit), say how often it is right on held-out and dev lines,
    and, with --model, how many of a model's translations asking for its вы could mend or
    break."""
    import random

    from rich.console import Console

    from subctx.bundle import load_bundle
    from subctx.decoding import DecodeOptions
    from subctx_train.data import Document, Segment, jsonl_files, read_documents
    from subctx_train.evaluate import read_ctxpro, translate_corpus
    from subctx_train.register_fit import ctxpro_examples, examples, fit, headroom, report_row
    from subctx_train.report import show_table

    left_out = set(exclude or [])
    files = [f for f in jsonl_files(data) if f.name not in left_out]
    console = Console(stderr=True)
    with console.status(f"reading {len(files)} files"):
        every = list(examples(read_documents(files), carry_dropout=0.3))
    random.Random(1).shuffle(every)
    kept, train = every[:held], every[held:]
    cues = fit(train, min_count=min_count, epochs=epochs, lr=lr,
               on_epoch=lambda e, loss: console.print(f"epoch {e}: loss {loss:.4f}"))
    cues.write(out)
    rows = [report_row("held out of training", cues, kept, margin)]
    if dev_root is not None:
        items = [i for name, its in read_ctxpro(dev_root / "ctxpro").items()
                 if "formality" in name for i in its]
        rows.append(report_row("ctxpro formality dev (English scene only)", cues,
                               ctxpro_examples(items), margin))
        friends = read_documents([dev_root / "friends_dev.jsonl"])
        rows.append(report_row("friends_dev, reference register carried", cues,
                               list(examples(friends)), margin))
        rows.append(report_row("friends_dev, nothing carried", cues,
                               list(examples(friends, carry_dropout=1.0)), margin))
    show_table(f"register cues ({len(cues.weights):,} weights, {len(train):,} examples)", rows)
    report = {"weights": len(cues.weights), "examples": len(train), "rows": rows}
    if model is not None and dev_root is not None:
        items = [i for name, its in read_ctxpro(dev_root / "ctxpro", ctxpro_limit).items()
                 if "formality" in name for i in its]
        docs = [Document(f"ctxpro/{n}", [Segment(s, None) for s in item.sentences[-2:]])
                for n, item in enumerate(items)]
        engine = _engine(model, Device.cpu, threads)
        with console.status(f"translating {len(items)} ctxpro items"):
            outputs = translate_corpus(engine, docs, DecodeOptions.for_model(
                load_bundle(model).manifest.context))
        report["headroom"] = headroom(cues, items, [out[-1] for out in outputs])
        show_table(f"asking for вы where the cues are sure ({model.name}, untagged, ctxpro "
                   f"formality)", report["headroom"])
    _json_out(json_file, report)


@app.command("dev-table", cls=PlainCommand)
def dev_table(
    reports: Annotated[list[Path], typer.Argument(
        metavar="FILES...", help="JSON files written by dev-report --json.")],
    markdown: Annotated[Path | None, typer.Option(
        metavar="FILE", help="Also write the table here.")] = None,
    json_file: Annotated[Path | None, typer.Option(
        "--json", metavar="FILE", help="Also write the merged report here.")] = None,
) -> None:
    """One dev table from several dev-report runs (e.g. models evaluated as they finished)."""
    import json

    from subctx_train.report import dev_table_markdown, show_dev_table

    merged: dict = {"models": {}}
    for path in reports:
        try:
            merged["models"].update(json.loads(path.read_text(encoding="utf-8"))["models"])
        except (OSError, ValueError, KeyError) as err:
            typer.echo(f"error: {path}: not a dev-report JSON ({err})", err=True)
            raise typer.Exit(1) from None
    show_dev_table(merged)
    _json_out(json_file, merged)
    if markdown is not None:
        markdown.write_text(dev_table_markdown(merged) + "\n", encoding="utf-8")


@app.command("throughput-flags", cls=PlainCommand)
def throughput_flags(
    report: Annotated[Path, typer.Argument(
        metavar="JSON", help="What `throughput --json` wrote.")],
    preset: Annotated[str, typer.Option(metavar="NAME", help="The preset to train.")
                      ] = "gpu-deep",
    run_minutes: Annotated[float, typer.Option(
        metavar="M", help="The run's length: a setting's warm-up (compile) costs its share.")
    ] = 10.0,
    batch: Annotated[bool, typer.Option(
        "--batch/--no-batch", metavar="",
        help="Also a larger --max-tokens where it keeps most of the updates a second "
             "(--no-batch: the settings of another shape, whose batch the report did not "
             "measure).")] = True,
) -> None:
    """The fastest setting of a throughput report as `train` options, on one line (nothing
    when the report is missing or has no row of the preset: the preset's defaults stand)."""
    import json
    import shlex

    from subctx_train.throughput import fastest_settings, setting_flags

    try:
        data = json.loads(report.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        typer.echo(f"throughput-flags: {report}: {err}; the preset's settings stand", err=True)
        return
    fields = fastest_settings(data, preset, run_minutes)
    if not batch:
        fields.pop("max_tokens", None)
    if not fields:
        typer.echo(f"throughput-flags: no row of {preset} in {report}; the preset's settings "
                   "stand", err=True)
    typer.echo(shlex.join(setting_flags(fields)))


@app.command(cls=PlainCommand,
             context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def throughput(
    ctx: typer.Context,
    preset: Annotated[list[str] | None, typer.Option(
        metavar="NAME", help="Presets to measure (repeatable); default gpu-deep and gpu-big.")
    ] = None,
    setting: Annotated[list[str] | None, typer.Option(
        metavar="NAME", help="Settings to run (repeatable): baseline, fused, no-sync, sides, "
                             "compile, each with every change of the list up to it; default "
                             "all.")] = None,
    max_tokens: Annotated[str, typer.Option(
        metavar="N,N,...", help="After the settings, the last one with these max_tokens "
                                "(empty: none).")] = "",
    steps: Annotated[int, typer.Option(metavar="N", help="Timed updates per row.")] = 50,
    warmup: Annotated[int, typer.Option(
        metavar="N", help="Updates before timing (torch.compile's start falls here).")] = 10,
    device: Annotated[Device, typer.Option(help="Where to train.")] = Device.auto,
    threads: ThreadsOpt = 0,
    peak_tflops: Annotated[float | None, typer.Option(
        metavar="X", help="The device's peak TFLOP/s for MFU (default: by the GPU's name, bf16 "
                          "dense, e.g. 989 for an H100; none on CPU).")] = None,
    data: Annotated[list[Path] | None, typer.Option(
        metavar="FILE", exists=True,
        help="Real document .jsonl files or folders instead of synthetic examples (with "
             "--spm).")] = None,
    spm_model: Annotated[Path | None, typer.Option(
        "--spm", exists=True, dir_okay=False, metavar="FILE",
        help="The SentencePiece model for --data.")] = None,
    examples: Annotated[int, typer.Option(
        metavar="N", help="Examples to draw batches from (synthetic ones have the real "
                          "length mix).")] = 40000,
    budget_seconds: Annotated[float | None, typer.Option(
        metavar="S", help="Start no row after this many seconds (the rest are listed as "
                          "skipped).")] = None,
    json_file: Annotated[Path | None, typer.Option(
        "--json", metavar="FILE", help="Write the report here (after every row).")] = None,
) -> None:
    """Training throughput of the trainer's step: target tokens/s, model FLOPs utilisation,
    peak memory and padding share per setting (stage 0, docs/recipe.md). Any --FIELD VALUE
    after the options sets a config field for every row (e.g. --architecture concat
    --max-k 1)."""
    from subctx_train.config import ConfigError, make_config, parse_overrides

    try:
        overrides = parse_overrides(ctx.args)
        presets = preset or ["gpu-deep", "gpu-big"]
        for name in presets:
            make_config(name, **overrides)
        sweep = [int(n) for n in max_tokens.split(",") if n.strip()]
    except ConfigError as err:
        raise ConfigUsageError(str(err), ctx) from None
    except ValueError:
        raise ConfigUsageError(f"--max-tokens {max_tokens}: integers separated by commas",
                               ctx) from None
    if data and not spm_model:
        raise ConfigUsageError("--data needs --spm (the tokenizer to read it with)", ctx)

    import torch

    from subctx_train.hardware import resolve_device
    from subctx_train.throughput import ladder, markdown_table, real_examples, run_throughput

    try:
        chosen = ladder(setting, sweep)
    except ValueError as err:
        raise ConfigUsageError(str(err), ctx) from None
    if threads:
        torch.set_num_threads(threads)
    where = resolve_device(device.value)
    real, vocab, name = None, None, "synthetic (real length mix)"
    if data:
        real, vocab = real_examples(data, spm_model, make_config(presets[0], **overrides),
                                    examples)
        name = f"{len(real)} examples of {', '.join(map(str, data))}"
    report = run_throughput(presets, chosen, where, steps, warmup, peak_tflops, real, vocab,
                            overrides, budget_seconds, json_file, name, examples,
                            progress=lambda row: typer.echo(
                                f"{row.preset} {row.setting}: "
                                + (row.error or f"{row.target_tokens_per_s:.0f} target tokens/s"),
                                err=True))
    for key, value in report.attention.items():
        typer.echo(f"attention {key}: {value}")
    typer.echo(f"training throughput on {report.device} (torch {report.torch}, peak "
               f"{report.peak_tflops or 'n/a'} TFLOP/s; {report.data}; {steps} timed updates "
               f"after {warmup})")
    typer.echo(markdown_table(report))
    if report.skipped:
        typer.echo(f"skipped (budget): {', '.join(report.skipped)}")


def main() -> None:
    from subctx.errors import SubctxError

    try:
        app()
    except (SubctxError, FileNotFoundError, NotADirectoryError) as problem:
        typer.echo(f"error: {problem}", err=True)  # a user's mistake: no traceback
        raise SystemExit(1) from None


if __name__ == "__main__":
    main()
