"""The `subctx` command line."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from subctx.bundle import default_bundle_path, load_bundle
from subctx.errors import BundleError, SubctxError
from subctx.files import Job, select_jobs
from subctx.guard import GuardSettings
from subctx.pipeline import SCHEDULES, DecodeOptions, DocumentResult, translate_documents
from subctx.srt import SubtitleFile, read_srt, render_srt
from subctx.textio import atomic_write_text
from subctx.units import DocumentPlan, plan_document
from subctx.wrap import DEFAULT_MAX_LINES, DEFAULT_WIDTH

EXAMPLES = """
[bold]Examples[/bold]

  subctx translate movie.srt                    [dim]# writes movie.ru.srt next to it[/dim]
  subctx translate Season1/ --recursive -o out/ [dim]# a whole folder, mirrored under out/[/dim]
  subctx translate movie.srt --context 0        [dim]# sentence by sentence, no context[/dim]
  subctx translate old.srt --encoding cp1251 --dry-run
"""

app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode="rich",
                  help="Context-aware subtitle translation (English to Russian).")
err = Console(stderr=True)
out = Console()


def fail(message: str, code: int = 1) -> typer.Exit:
    err.print(f"[bold red]error:[/bold red] {escape(message)}", highlight=False, soft_wrap=True)
    return typer.Exit(code)


def warn(source: Path, message: str) -> None:
    err.print(f"[yellow]warning:[/yellow] {escape(f'{source}: {message}')}", highlight=False,
              soft_wrap=True)


@dataclass
class Loaded:
    job: Job
    sub: SubtitleFile
    plan: DocumentPlan
    started: float = field(default_factory=time.perf_counter)


def _load(jobs: list[Job], encoding: str | None,
          failed: list[tuple[Path, str]]) -> list[Loaded]:
    loaded = []
    for job in jobs:
        try:
            sub = read_srt(job.source, encoding)
        except SubctxError as problem:
            failed.append((job.source, str(problem)))
            continue
        plan = plan_document(sub)
        for warning in [*sub.warnings, *plan.warnings][:5]:
            warn(job.source, warning)
        extra = len(sub.warnings) + len(plan.warnings) - 5
        if extra > 0:
            warn(job.source, f"{extra} more warning(s)")
        loaded.append(Loaded(job, sub, plan))
    return loaded


def _summary(rows: list[tuple[str, int, float]], failed: list[tuple[Path, str]],
             skipped: list[tuple[Path, str]], elapsed: float) -> None:
    if not rows and not failed and not skipped:
        out.print("nothing to translate")
    cues = sum(r[1] for r in rows)
    table = Table(title="subctx translate", show_footer=True)
    table.add_column("file", footer=f"{len(rows)} translated")
    table.add_column("cues", justify="right", footer=str(cues))
    # files are translated together (their cues share batches): a file's own speed does not
    # exist, so each row says when it was written and the footer gives the overall rate
    table.add_column("written after (s)", justify="right", footer=f"{elapsed:.1f}")
    table.add_column("cues/s", justify="right", footer=f"{cues / max(elapsed, 1e-9):.1f}")
    for name, n, seconds in rows:
        table.add_row(name, str(n), f"{seconds:.1f}", "")
    if rows:
        out.print(table)
    for path, reason in skipped:
        out.print(f"[dim]skipped[/dim] {escape(f'{path}: {reason}')}", highlight=False,
                  soft_wrap=True)
    if failed:
        out.print(f"[bold red]{len(failed)} failure(s):[/bold red]")
        for path, reason in failed:
            out.print(f"  [red]✗[/red] {escape(f'{path}: {reason}')}", highlight=False,
                      soft_wrap=True)


@app.command(epilog=EXAMPLES)
def translate(
    paths: Annotated[list[Path], typer.Argument(help=".srt files or folders of them.",
                                                show_default=False)],
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", help="Output file (one input) or folder (mirrors input folders).")
    ] = None,
    model: Annotated[Path | None, typer.Option(
        help="Model bundle folder (default: the embedded en-ru model).")] = None,
    context: Annotated[int | None, typer.Option(
        min=0, help="Previous cues used as context (default: the model's).")] = None,
    max_gap: Annotated[float | None, typer.Option(
        min=0.0, help="Seconds of silence that break context (default: the model's, 7).")
    ] = None,
    beam: Annotated[int, typer.Option(min=1, max=32, help="Beam size.")] = 4,
    device: Annotated[str, typer.Option(help="auto, cpu or cuda.")] = "auto",
    compute_type: Annotated[str, typer.Option(
        help="CTranslate2 compute type (auto: int8 on CPU, int8_float16 on GPU).")] = "auto",
    threads: Annotated[int, typer.Option(min=0, help="CPU threads (0: all cores).")] = 0,
    recursive: Annotated[bool, typer.Option("--recursive", "-r",
                                            help="Look into subfolders.")] = False,
    overwrite: Annotated[bool, typer.Option(help="Re-translate existing outputs.")] = False,
    encoding: Annotated[str | None, typer.Option(
        help="Input encoding (default: detected).")] = None,
    width: Annotated[int, typer.Option(min=10, help="Max characters per line.")] = DEFAULT_WIDTH,
    max_lines: Annotated[int, typer.Option(min=1, help="Max lines per cue.")] = DEFAULT_MAX_LINES,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Check inputs and show what would be written; translate nothing.")
    ] = False,
    schedule: Annotated[str, typer.Option(
        help="sequential: each cue after the one before it; batched: all cues in large "
             "batches, repeated until every cue has its final context (same output).")
    ] = "sequential",
    guard: Annotated[bool, typer.Option(
        help="Fall back to a cue's translation without context when the context one is not "
             "a translation of it.")] = True,
) -> None:
    """Translate .srt subtitles, each line with the line(s) just before it as context."""
    if schedule not in SCHEDULES:
        raise fail(f"unknown --schedule '{schedule}' (use {' or '.join(SCHEDULES)})")
    selection = select_jobs(paths, output, recursive, overwrite)
    failed = list(selection.failed)
    loaded = _load(selection.jobs, encoding, failed)
    if dry_run:
        table = Table(title="subctx translate --dry-run (nothing written)")
        for column in ("input", "encoding", "cues", "units", "output"):
            table.add_column(column, overflow="fold")
        for item in loaded:
            table.add_row(str(item.job.source), item.sub.encoding, str(len(item.sub.cues)),
                          str(len(item.plan.units)), str(item.job.output))
        out.print(table)
        if failed or selection.skipped:
            _summary([], failed, selection.skipped, 0.0)
        raise typer.Exit(1 if failed else 0)
    if not loaded:
        _summary([], failed, selection.skipped, 0.0)
        raise typer.Exit(1 if failed else 0)

    try:
        from subctx.engine import open_engine  # deferred: loading CTranslate2 takes a moment

        bundle = load_bundle(model if model is not None else default_bundle_path())
        engine = open_engine(bundle, device=device, compute_type=compute_type, threads=threads)
    except BundleError as problem:
        if model is None and not default_bundle_path().exists():
            raise fail("no model installed: the embedded default bundle is missing "
                       f"({default_bundle_path()}); pass --model DIR") from None
        raise fail(str(problem)) from None
    settings = bundle.manifest.context
    options = DecodeOptions(
        context=settings.default_k if context is None else context,
        max_gap=settings.max_gap if max_gap is None else max_gap, beam_size=beam,
        schedule=schedule, guard=GuardSettings(enabled=guard))
    if options.context > engine.max_context:
        warn(bundle.path, f"this model uses at most {engine.max_context} context cue(s); "
                          f"--context {options.context} is capped")

    rows: list[tuple[str, int, float]] = []
    start = time.perf_counter()
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeRemainingColumn())
    with Progress(*columns, console=err, transient=True) as progress:
        files_bar = progress.add_task("files", total=len(loaded))
        cues_bar = progress.add_task("cues", total=sum(len(i.plan.units) for i in loaded))

        def units_done(doc: int, units: list[int]) -> None:
            progress.advance(cues_bar, len(units))

        def document_done(doc: int, result: DocumentResult) -> None:
            item = loaded[doc]
            try:
                text = render_srt(item.sub, result.cue_lines(width, max_lines))
                atomic_write_text(item.job.output, text)
            except OSError as problem:
                failed.append((item.job.source, f"cannot write {item.job.output}: "
                                                f"{problem.strerror or problem}"))
            else:
                for warning in result.warnings[:3]:
                    warn(item.job.source, warning)
                rows.append((str(item.job.output), len(item.sub.cues),
                             time.perf_counter() - start))
            progress.advance(files_bar)

        try:
            translate_documents([i.plan for i in loaded], engine, options,
                                on_units_done=units_done, on_document_done=document_done)
        except KeyboardInterrupt:
            progress.stop()
            err.print(f"[bold red]interrupted:[/bold red] {len(rows)} file(s) written; "
                      "no partial file was left behind")
            raise typer.Exit(130) from None
    _summary(rows, failed, selection.skipped, time.perf_counter() - start)
    raise typer.Exit(1 if failed else 0)


@app.command(epilog="""
[bold]Examples[/bold]

  subctx review movie.srt                          [dim]# translate, then review[/dim]
  subctx review movie.srt --translation movie.ru.srt
""")
def review(
    source: Annotated[Path, typer.Argument(help="The English .srt.", show_default=False)],
    translation: Annotated[Path | None, typer.Option(
        help="An existing translation to review (default: translate now).")] = None,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", help="Where to save (default: the translation, or NAME.ru.srt).")
    ] = None,
    model: Annotated[Path | None, typer.Option(help="Model bundle folder.")] = None,
    context: Annotated[int | None, typer.Option(min=0, help="Context cues.")] = None,
    max_gap: Annotated[float | None, typer.Option(min=0.0)] = None,
    beam: Annotated[int, typer.Option(min=1, max=32)] = 4,
    device: Annotated[str, typer.Option()] = "auto",
    encoding: Annotated[str | None, typer.Option()] = None,
) -> None:
    """Review the context-dependent choices (it, they, you, I...) of a translation."""
    from subctx.files import output_name
    from subctx.review.loader import open_session

    if not source.is_file():
        raise fail(f"{source}: no such file")
    target = output or translation or source.with_name(output_name(source))
    if target.resolve() == source.resolve():
        raise fail("the output would overwrite the English input")
    try:
        bundle = load_bundle(model if model is not None else default_bundle_path())
        session = open_session(source, translation, bundle, context, max_gap, beam, device,
                               encoding, err)
    except BundleError as problem:
        raise fail(str(problem)) from None
    except SubctxError as problem:
        raise fail(f"{source}: {problem}") from None
    from subctx.review.app import ReviewApp

    ReviewApp(session, target, title=f"subctx review — {source.name}").run()


@app.command()
def info(model: Annotated[Path | None, typer.Argument(help="Bundle folder.")] = None) -> None:
    """Show a model bundle's manifest: architecture, context settings, dev scores."""
    try:
        bundle = load_bundle(model if model is not None else default_bundle_path())
    except BundleError as problem:
        raise fail(str(problem)) from None
    out.print_json(bundle.manifest.to_json())


def main() -> None:
    try:
        app()
    except SubctxError as problem:  # last resort: never a traceback for a user error
        err.print(f"[bold red]error:[/bold red] {problem}", highlight=False, soft_wrap=True)
        raise SystemExit(1) from None


if __name__ == "__main__":
    main()
