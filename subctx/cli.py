"""The `subctx` command line: each command parses its options, calls the library (subctx.batch,
subctx.review) and prints."""

from __future__ import annotations

import codecs
import os
import time
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from subctx.backends import COMPUTE_TYPES, DEVICES
from subctx.batch import (
    DEFAULT_LAYOUT,
    Failure,
    Layout,
    ModelChoice,
    Written,
    load,
    translate_files,
)
from subctx.clihelp import PlainCommand, PlainGroup
from subctx.contract import BATCH_SIZE
from subctx.controls import FORMALITY, SPEAKER_GENDER, choices
from subctx.decoding import SCHEDULES, SCOPES
from subctx.errors import BundleError, SubctxError
from subctx.files import select_jobs
from subctx.names import GLOSSARY_BESIDE, Glossary, NameRule
from subctx.reading import DEFAULT_FIT, NO_FIT
from subctx.wrap import DEFAULT_MAX_CPS, DEFAULT_MAX_LINES, DEFAULT_WIDTH

# the choices, as Typer validates and lists them (from the registries)
Device = Enum("Device", {name: name for name in DEVICES}, type=str)
ComputeType = Enum("ComputeType", {name: name for name in COMPUTE_TYPES}, type=str)
Schedule = Enum("Schedule", {name: name for name in SCHEDULES}, type=str)
Scope = Enum("Scope", {name: name for name in SCOPES}, type=str)
Formality = Enum("Formality", {v: v for v in choices(FORMALITY)}, type=str)
SpeakerGender = Enum("SpeakerGender", {v: v for v in choices(SPEAKER_GENDER)}, type=str)

EXAMPLES = """
[bold]Examples[/bold]

  subctx translate movie.srt                    [dim]# writes movie.ru.srt next to it[/dim]
  subctx translate Season1/ --recursive -o out/ [dim]# a whole folder, mirrored under out/[/dim]
  subctx translate movie.srt --context 0        [dim]# sentence by sentence, no context[/dim]
  subctx translate old.srt --encoding cp1251 --dry-run
"""

app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode="rich",
                  help="Context-aware subtitle translation (English to Russian).",
                  cls=PlainGroup)
err = Console(stderr=True)
out = Console()


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"subctx {version('subctx')}")
        except PackageNotFoundError:
            typer.echo("subctx (not installed)")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", metavar="", callback=_version,
                                          is_eager=True, help="Show the version and exit.")
                       ] = False,
) -> None:
    """Context-aware subtitle translation (English to Russian)."""


def fail(message: str, code: int = 1) -> typer.Exit:
    err.print(f"[bold red]error:[/bold red] {escape(message)}", highlight=False, soft_wrap=True)
    return typer.Exit(code)


def warn(source: Path, message: str) -> None:
    err.print(f"[yellow]warning:[/yellow] {escape(f'{source}: {message}')}", highlight=False,
              soft_wrap=True)


def _warn_some(source: Path, warnings: list[str], shown: int) -> None:
    for warning in warnings[:shown]:
        warn(source, warning)
    if len(warnings) > shown:
        warn(source, f"{len(warnings) - shown} more warning(s)")


# -- the options both translate and review take ---------------------------------------------------
ModelOpt = Annotated[Path | None, typer.Option(
    metavar="DIR", help="Model bundle folder (default: $SUBCTX_MODEL, else the embedded "
                        "en-ru model).")]
ContextOpt = Annotated[int | None, typer.Option(
    min=0, metavar="K", help="Previous cues used as context (default: the model's).")]
MaxGapOpt = Annotated[float | None, typer.Option(
    min=0.0, metavar="SECONDS", help="Seconds of silence that break context (default: the "
                                     "model's, 7).")]
BeamOpt = Annotated[int, typer.Option(min=1, max=32, metavar="N", help="Beam size.")]
DeviceOpt = Annotated[Device, typer.Option(help="Where to run.")]
ComputeOpt = Annotated[ComputeType, typer.Option(
    help="CTranslate2 compute type (auto: int8 on CPU, int8_float16 on GPU).")]
def _threads(n: int) -> int:
    """--threads, at most the machine's cores (more only slows decoding down)."""
    cores = os.cpu_count() or 1
    if n > cores:
        err.print(f"[yellow]--threads {n}: this machine has {cores} core(s); using {cores}"
                  "[/yellow]")
        return cores
    return n


ThreadsOpt = Annotated[int, typer.Option(min=0, metavar="N", callback=_threads,
                                         help="CPU threads (0: all cores).")]
GuardOpt = Annotated[bool | None, typer.Option(
    "--guard/--no-guard", metavar="", show_default=False,
    help="Fall back to a cue's translation without context when the context one is not a "
         "translation of it (default: the model's).")]
ScopeOpt = Annotated[Scope | None, typer.Option(
    show_default=False, help="What context may change in a cue's translation: agreement "
                             "(ты/вы, pronouns, elided verbs; other differences keep the "
                             "translation without context) or all (default: the model's).")]
def _known_encoding(name: str | None) -> str | None:
    """--encoding, checked with the other options (before any input is read): a text codec
    Python knows."""
    if name is None:
        return None
    try:
        codec = codecs.lookup(name)
    except (LookupError, ValueError):
        raise typer.BadParameter(f"unknown encoding '{name}' (for example utf-8, cp1251, "
                                 "latin-1)") from None
    if not getattr(codec, "_is_text_encoding", True):  # rot13, base64...: not for bytes->text
        raise typer.BadParameter(f"'{name}' is not a text encoding")
    return name


EncodingOpt = Annotated[str | None, typer.Option(
    "--encoding", metavar="NAME", callback=_known_encoding,
    help="Input encoding (default: detected).")]
FormalityOpt = Annotated[Formality, typer.Option(
    help="Address the listener as ты (informal) or вы (formal) throughout; auto: the model "
         "decides, from the line and its context. Needs a model trained with the tags.")]
GenderOpt = Annotated[SpeakerGender, typer.Option(
    help="The speaker's gender where Russian shows it (я сделал / сделала); auto: the model "
         "decides. Needs a model trained with the tags.")]
GlossaryOpt = Annotated[Path | None, typer.Option(
    metavar="FILE",
    help="Renderings to force: tab-separated lines 'English<TAB>Russian' (a name in the "
         f"nominative: it is declined as the model declines it). A {GLOSSARY_BESIDE} "
         "beside a film adds to it; this file wins where both have an entry.")]
NamesOpt = Annotated[bool, typer.Option(
    "--names/--no-names", metavar="",
    help="Write each name of a file one way (the model's most frequent rendering, else a "
         "transliteration; never left in Latin letters).")]


def _choice(model: Path | None, device: Device, compute_type: ComputeType, threads: int,
            context: int | None, max_gap: float | None, beam: int, guard: bool | None,
            scope: Scope | None, formality: Formality, speaker_gender: SpeakerGender,
            schedule: Schedule | None = None, batch_size: int = BATCH_SIZE) -> ModelChoice:
    return ModelChoice(model, device.value, compute_type.value, threads, context, max_gap,
                       beam, guard, scope.value if scope else None,
                       schedule.value if schedule else None, formality.value,
                       speaker_gender.value, batch_size)


def _bundle(choice: ModelChoice):
    try:
        return choice.bundle()
    except BundleError as problem:
        raise fail(str(problem)) from None


def _translator(choice: ModelChoice, bundle):
    """The loaded model, or one clear line (a device or compute type this machine lacks)."""
    try:
        return choice.translator(bundle)
    except BundleError as problem:
        raise fail(str(problem)) from None


# -- translate ------------------------------------------------------------------------------------
def _cue_list(numbers: list[int]) -> str:
    shown = ", ".join(str(n + 1) for n in numbers[:5])
    return shown + (f" (+{len(numbers) - 5})" if len(numbers) > 5 else "")


def _summary(rows: list[Written], failed: list[Failure], skipped: list[Failure],
             elapsed: float, layout: Layout = DEFAULT_LAYOUT) -> None:
    if not rows and not failed and not skipped:
        out.print("nothing to translate")
    cues = sum(r.cues for r in rows)
    # files are translated together (their cues share batches): a file has no speed of its
    # own, so each row says when it was written and the caption gives the overall rate
    table = Table(title="subctx translate", show_footer=True,
                  caption=f"{cues} cues in {elapsed:.1f} s: {cues / max(elapsed, 1e-9):.1f} "
                          "cues/s")
    table.add_column("file", footer=f"{len(rows)} translated", overflow="fold", ratio=1)
    table.add_column("cues", justify="right", footer=str(cues))
    table.add_column(f">{layout.max_lines} lines", justify="right",
                     footer=str(sum(len(r.over_lines) for r in rows)))
    table.add_column(f">{layout.max_cps:g} cps", justify="right",
                     footer=str(sum(len(r.too_fast) for r in rows)))
    table.add_column("shortened", justify="right",
                     footer=str(sum(len(r.shortened) for r in rows)))
    table.add_column("renamed", justify="right", footer=str(sum(len(r.renamed) for r in rows)))
    table.add_column("fallbacks", justify="right", footer=str(sum(r.fallbacks for r in rows)))
    table.add_column("done (s)", justify="right", footer=f"{elapsed:.1f}")
    for r in rows:
        table.add_row(str(r.output), str(r.cues), str(len(r.over_lines)), str(len(r.too_fast)),
                      str(len(r.shortened)), str(len(r.renamed)), str(r.fallbacks),
                      f"{r.seconds:.1f}")
    if rows:
        out.print(table)
    for r in rows:
        if r.over_lines:
            out.print(f"[dim]{escape(str(r.output))}: cues over {layout.max_lines} lines: "
                      f"{_cue_list(r.over_lines)}[/dim]", highlight=False)
        if r.too_fast:
            out.print(f"[dim]{escape(str(r.output))}: cues over {layout.max_cps:g} characters "
                      f"per second: {_cue_list(r.too_fast)}[/dim]", highlight=False)
        if r.glossary_missing:
            entries = ", ".join(dict.fromkeys(entry for _, entry in r.glossary_missing))
            cues = sorted({cue for cue, _ in r.glossary_missing})
            out.print(f"[dim]{escape(str(r.output))}: cues without their glossary rendering "
                      f"({escape(entries)}): {_cue_list(cues)}[/dim]", highlight=False)
    for path, reason in skipped:
        out.print(f"[dim]skipped[/dim] {escape(f'{path}: {reason}')}", highlight=False,
                  soft_wrap=True)
    if failed:
        out.print(f"[bold red]{len(failed)} failure(s):[/bold red]")
        for path, reason in failed:
            out.print(f"  [red]✗[/red] {escape(f'{path}: {reason}')}", highlight=False,
                      soft_wrap=True)


@app.command(epilog=EXAMPLES, cls=PlainCommand)
def translate(
    paths: Annotated[list[Path], typer.Argument(help="Subtitle files (.srt, .vtt, .ass, .ssa) "
                                                     "or folders of them.",
                                                show_default=False, metavar="FILES...")],
    output: Annotated[str | None, typer.Option(  # a str: a trailing / says "a folder"
        "--output", "-o", metavar="PATH",
        help="Output file (one input; the input's own format and extension) or folder "
             "(ending in /, or existing; several inputs or a folder; mirrors input "
             "folders).")] = None,
    model: ModelOpt = None,
    context: ContextOpt = None,
    max_gap: MaxGapOpt = None,
    beam: BeamOpt = 4,
    device: DeviceOpt = Device.auto,
    compute_type: ComputeOpt = ComputeType.auto,
    threads: ThreadsOpt = 0,
    recursive: Annotated[bool, typer.Option("--recursive", "-r", metavar="",
                                            help="Look into subfolders.")] = False,
    overwrite: Annotated[bool, typer.Option("--overwrite", metavar="",
                                            help="Re-translate existing outputs.")] = False,
    encoding: EncodingOpt = None,
    width: Annotated[int, typer.Option(min=10, metavar="CHARS",
                                       help="Max characters per line.")] = DEFAULT_WIDTH,
    max_lines: Annotated[int, typer.Option(
        min=1, metavar="N", help="Lines a cue should have at most; longer text gets more lines "
                                 "(never lines over --width) and is listed in the summary.")
    ] = DEFAULT_MAX_LINES,
    max_cps: Annotated[float, typer.Option(
        min=1.0, metavar="CPS", help="Reading speed (characters per second) over which a cue "
                                     "is listed in the summary.")] = DEFAULT_MAX_CPS,
    fit_reading_speed: Annotated[bool, typer.Option(
        "--fit-reading-speed/--no-fit-reading-speed", metavar="",
        help="Give a cue over --max-cps or --max-lines the likeliest of the model's shorter "
             "alternatives that brings it within them (only such cues are decoded again); "
             "what stays over is listed in the summary.")] = True,
    glossary: GlossaryOpt = None,
    names: NamesOpt = True,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", metavar="",
        help="Check inputs and show what would be written; translate nothing.")] = False,
    schedule: Annotated[Schedule, typer.Option(
        help="blocks: long scenes cut into blocks decoded side by side, the block starts "
             "repaired (the sequential output, faster); sequential: each cue after the one "
             "before it.")] = Schedule.blocks,
    guard: GuardOpt = None,
    context_scope: ScopeOpt = None,
    formality: FormalityOpt = Formality.auto,
    speaker_gender: GenderOpt = SpeakerGender.auto,
    batch_size: Annotated[int, typer.Option(
        min=1, metavar="N", help="Cues decoded together (more can be faster on a GPU; on a CPU "
                                 "the default is the fastest measured).")] = BATCH_SIZE,
) -> None:
    """Translate subtitles (.srt, .vtt, .ass), each line with the line(s) just before it as
    context."""
    choice = _choice(model, device, compute_type, threads, context, max_gap, beam, guard,
                     context_scope, formality, speaker_gender, schedule, batch_size)
    bundle = _bundle(choice)  # the model's manifest is read before any input
    # a device or compute type asked for is checked before any input too (it is what fails
    # where the machine lacks it); otherwise loading the model waits until there is work
    translator = _translator(choice, bundle) if choice.device == "cuda" or \
        choice.compute_type not in ("auto", "default") else None
    try:
        forced = Glossary.read(glossary) if glossary is not None else Glossary()
        selection = select_jobs(paths, output, recursive, overwrite)
    except SubctxError as problem:
        raise fail(str(problem)) from None
    loaded, failed = load(selection.jobs, encoding)
    failed = [*selection.failed, *failed]
    for item in loaded:
        _warn_some(item.job.source, item.warnings, 5)
    if dry_run and loaded:
        table = Table(title="subctx translate --dry-run (nothing written)")
        for column in ("input", "encoding", "cues", "units", "output"):
            table.add_column(column, overflow="fold")
        for item in loaded:
            table.add_row(str(item.job.source), item.sub.encoding, str(len(item.sub.cues)),
                          str(len(item.plan.units)), str(item.job.output))
        out.print(table)
    if dry_run or not loaded:
        if failed or selection.skipped or not loaded:
            _summary([], failed, selection.skipped, 0.0)
        raise typer.Exit(1 if failed else 0)

    translator = translator or _translator(choice, bundle)
    options = choice.options(bundle)
    served_instead = getattr(translator, "served_instead", None)  # a backend's, not a stub's
    if served_instead:
        warn(bundle.path, f"served by PyTorch: {served_instead}")
    if options.context > translator.max_context:
        warn(bundle.path, f"this model uses at most {translator.max_context} context cue(s); "
                          f"--context {options.context} is capped")
    layout = Layout(width, max_lines, max_cps)
    start = time.perf_counter()
    written = 0
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeRemainingColumn())
    with Progress(*columns, console=err, transient=True) as progress:
        files_bar = progress.add_task("files", total=len(loaded))
        cues_bar = progress.add_task("cues", total=sum(len(i.plan.units) for i in loaded))

        def file_written(result: Written | None) -> None:
            nonlocal written
            if result is not None:
                written += 1
                _warn_some(result.source, result.warnings, 3)
            progress.advance(files_bar)

        try:
            rows, unwritten = translate_files(
                loaded, translator, options, layout,
                on_units_done=lambda n: progress.advance(cues_bar, n), on_written=file_written,
                fit=DEFAULT_FIT if fit_reading_speed else NO_FIT,
                names=NameRule(unify=names, glossary=forced))
        except KeyboardInterrupt:
            progress.stop()
            err.print(f"[bold red]interrupted:[/bold red] {written} file(s) written; "
                      "no partial file was left behind")
            raise typer.Exit(130) from None
    failed += unwritten
    _summary(rows, failed, selection.skipped, time.perf_counter() - start, layout)
    raise typer.Exit(1 if failed else 0)


# -- review ---------------------------------------------------------------------------------------
@app.command(cls=PlainCommand, epilog="""
[bold]Examples[/bold]

  subctx review movie.srt                          [dim]# translate, then review[/dim]
  subctx review movie.srt --translation movie.ru.srt
""")
def review(
    source: Annotated[Path, typer.Argument(help="The English subtitles.", show_default=False,
                                           metavar="FILE")],
    translation: Annotated[Path | None, typer.Option(
        metavar="FILE", help="An existing translation to review (default: translate now).")
    ] = None,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", metavar="FILE",
        help="Where to save (default: the translation, or NAME.ru.srt).")] = None,
    model: ModelOpt = None,
    context: ContextOpt = None,
    max_gap: MaxGapOpt = None,
    beam: BeamOpt = 4,
    device: DeviceOpt = Device.auto,
    compute_type: ComputeOpt = ComputeType.auto,
    threads: ThreadsOpt = 0,
    guard: GuardOpt = None,
    context_scope: ScopeOpt = None,
    formality: FormalityOpt = Formality.auto,
    speaker_gender: GenderOpt = SpeakerGender.auto,
    glossary: GlossaryOpt = None,
    names: NamesOpt = True,
    encoding: EncodingOpt = None,
) -> None:
    """Review the context-dependent choices (it, they, you, I...) of a translation."""
    from subctx.files import output_name
    from subctx.review.loader import open_session
    from subctx.review.render import save_error

    if not source.is_file():
        raise fail(f"{source}: no such file")
    if translation is not None and not translation.is_file():
        raise fail(f"{translation}: no such file (--translation)")
    target = output or translation or source.with_name(output_name(source))
    if target.resolve() == source.resolve():
        raise fail("the output would overwrite the English input")
    if translation is None and target.is_file():  # reopening: resume the review
        translation = target
        err.print(f"resuming the review of {target} (pass --translation or -o for another)")
    choice = _choice(model, device, compute_type, threads, context, max_gap, beam, guard,
                     context_scope, formality, speaker_gender)
    bundle = _bundle(choice)
    try:
        forced = Glossary.read(glossary) if glossary is not None else Glossary()
    except SubctxError as problem:
        raise fail(str(problem)) from None
    log = target.with_suffix(".review.json")
    try:
        session = open_session(source, translation, bundle, choice, encoding, err,
                               NameRule(unify=names, glossary=forced),
                               log if log.is_file() and translation is not None
                               and translation.resolve() == target.resolve() else None)
    except BundleError as problem:
        raise fail(str(problem)) from None
    except SubctxError as problem:
        raise fail(f"{translation if _is_about(problem, translation) else source}: "
                   f"{problem}") from None
    if translation is not None and log.is_file():
        resumed = session.resume(log)
        err.print(f"{resumed} earlier decision(s) restored from {log.name}")
    if translation is None:  # a first translation is saved at once (the input is untouched)
        try:
            session.save(target)
        except OSError as problem:
            raise fail(save_error(target, problem)) from None
        err.print(f"translation written to {target}")
    from subctx.review.app import ReviewApp

    ReviewApp(session, target, title=f"subctx review — {source.name}").run()


def _is_about(problem: SubctxError, path: Path | None) -> bool:
    """Whether a reading error came from the translation file rather than the English one."""
    return path is not None and getattr(problem, "path", None) == path


# -- info -----------------------------------------------------------------------------------------
INFO_METRICS = [("friends_bleu", "friends_dev BLEU"), ("friends_chrf", "friends_dev chrF"),
                ("flores_bleu", "flores_dev BLEU"), ("flores_chrf", "flores_dev chrF"),
                ("deixis_dev", "deixis (Voita dev)"),
                ("lex_cohesion_dev", "lexical cohesion (Voita dev)"),
                ("ctxpro_dev", "ctxpro dev"), ("sentences_per_s", "sentences/s (2 cores)")]


@app.command(cls=PlainCommand)
def info(
    model: Annotated[Path | None, typer.Argument(metavar="[DIR]",
                                                 help="Bundle folder (default: embedded).")
                     ] = None,
    json_out: Annotated[bool, typer.Option("--json", metavar="",
                                           help="Print the whole manifest as JSON.")] = False,
    model_option: Annotated[Path | None, typer.Option(
        "--model", metavar="DIR", help="The bundle, as translate takes it (or give DIR).")
    ] = None,
) -> None:
    """Show a model bundle: what it is, its context settings and its measured dev scores."""
    if model is not None and model_option is not None and model != model_option:
        raise fail("two bundles given (DIR and --model): give one")
    model = model if model is not None else model_option
    choice = ModelChoice(model=model)
    bundle = _bundle(choice)  # its files checked, as translate checks them
    m = bundle.manifest
    if json_out:
        out.print_json(m.to_json())
        return
    training = m.info.get("training", {})
    cfg = training.get("config", {})
    ctx = m.context
    out.print(f"[bold]{bundle.path}[/bold]")
    out.print(f"{m.source_lang}→{m.target_lang}, {m.architecture} ({m.backend}), "
              f"{(training.get('parameters') or 0) / 1e6:.1f}M parameters, "
              f"{training.get('quantization', '?')}; "
              f"{cfg.get('enc_layers', '?')}+{cfg.get('dec_layers', '?')} layers, "
              f"d={cfg.get('d_model', '?')}")
    out.print(f"context: K={ctx.default_k} by default (at most {ctx.max_k}), cues up to "
              f"{ctx.max_gap:g} s apart, target side: {ctx.target_side}; "
              f"length penalty {m.length_penalty:g}")
    out.print(f"context may change: {SCOPES[ctx.scope].words}; guard "
              f"{'on' if ctx.guard else 'off'} (--context-scope, --guard/--no-guard)")
    if training.get("steps"):
        out.print(f"trained: {training.get('steps')} steps in all (data, budget and hardware: "
                  "the model card, README.md in the bundle)")
    if not m.scores:
        out.print("dev scores: not measured (subctx-train dev-report BUNDLE --record)")
        return
    table = Table(title="dev scores (measured on this bundle)")
    table.add_column("")
    for condition in m.scores:
        table.add_column(condition, justify="right")
    for key, title in INFO_METRICS:
        table.add_row(title, *(str(scores.get(key, "")) for scores in m.scores.values()))
    out.print(table)
    out.print("[dim]the model card (README.md in the bundle) says how they were measured; "
              "--json prints the whole manifest[/dim]")


def main() -> None:
    try:
        app()
    except SubctxError as problem:  # last resort: never a traceback for a user error
        err.print(f"[bold red]error:[/bold red] {problem}", highlight=False, soft_wrap=True)
        raise SystemExit(1) from None


if __name__ == "__main__":
    main()
