"""Which files to translate and where their translations go."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from subctx.errors import SubctxError
from subctx.formats import EXTENSIONS, FORMATS


class OutputError(SubctxError):
    """An output location that cannot take what was asked for."""


_SOURCE_TAG = re.compile(r"\.(en|eng|english)$", re.IGNORECASE)


@dataclass
class Job:
    source: Path
    output: Path
    named: bool = False  # the output is the file `-o` named, not a name made from the input's


@dataclass
class Selection:
    jobs: list[Job] = field(default_factory=list)
    skipped: list[tuple[Path, str]] = field(default_factory=list)
    failed: list[tuple[Path, str]] = field(default_factory=list)


def output_name(source: Path, lang: str = "ru") -> str:
    """movie.srt -> movie.ru.srt; movie.en.vtt -> movie.ru.vtt (the format stays)."""
    stem = _SOURCE_TAG.sub("", source.stem)
    suffix = source.suffix if source.suffix.lower() in EXTENSIONS else ".srt"
    return f"{stem}.{lang}{suffix}"


def is_translation(path: Path, lang: str = "ru") -> bool:
    name = path.name.lower()
    return any(name.endswith(f".{lang}{suffix}") for suffix in EXTENSIONS)


def _subtitle_files(folder: Path, recursive: bool) -> list[Path]:
    """The subtitle files (.srt, .vtt, .ass, .ssa) of a folder."""
    pattern = "**/*" if recursive else "*"
    return sorted(p for p in folder.glob(pattern)
                  if p.is_file() and p.suffix.lower() in EXTENSIONS and not p.name.startswith("."))


def format_mismatch(output: Path, fmt: str, source: Path) -> str | None:
    """Why the file `output` cannot hold the translation of `source`, a file of format `fmt`
    (a translation is written in its input's format): its extension is another format's.
    None when it names `fmt` or no format at all."""
    named = EXTENSIONS.get(output.suffix.lower())
    if named is None or named.name == fmt:
        return None
    own = EXTENSIONS.get(source.suffix.lower())
    right = output.with_suffix(source.suffix if own is not None and own.name == fmt
                               else FORMATS[fmt].extensions[0])
    return (f"-o {output}: {source.name} is {fmt.upper()}, not {named.name.upper()}, and a "
            f"translation is written in its input's own format: name the output {right}")


def _single_output(output: Path, source: Path) -> Path:
    """The file `-o` names for the one input `source`; OutputError when it cannot be the name
    of its translation (no subtitle extension, or another format's)."""
    fmt = EXTENSIONS.get(source.suffix.lower())
    if output.suffix.lower() not in EXTENSIONS:
        right = output.with_suffix(source.suffix if fmt is not None else ".srt")
        raise OutputError(f"-o {output}: neither a subtitle file name ({', '.join(EXTENSIONS)}) "
                          f"nor a folder; for a file name it like {right}, for a folder end it "
                          f"with / ({output}/) or give an existing folder")
    if fmt is not None and (problem := format_mismatch(output, fmt.name, source)):
        raise OutputError(problem)
    return output


def _resolved(path: Path) -> Path:
    """The path with its links followed (a loop of links: the path as it is)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path.absolute()


def unwritable(target: Path) -> str | None:
    """Why `target` cannot be written (None: it can), known before any work on it: the nearest
    folder on its way that exists must be one the user may write in (to create the missing
    folders below it, then the file)."""
    if target.is_dir():
        return f"its output {target} is a folder"
    folder = target.parent
    while not os.path.lexists(folder) and folder.parent != folder:
        folder = folder.parent
    if not folder.is_dir():
        what = "a file" if folder.exists() else "a broken link"
        return f"cannot create the folder {target.parent} for its output: {folder} is {what}"
    if not os.access(folder, os.W_OK | os.X_OK):
        if folder == target.parent:
            return f"cannot write its output {target}: no permission to write in {folder}"
        return (f"cannot create the folder {target.parent} for its output: no permission to "
                f"write in {folder}")
    return None


def _exists(source: Path, target: Path) -> str:
    """Why a finished output is skipped, saying so where the input changed after it."""
    older = target.stat().st_mtime < source.stat().st_mtime
    return (f"{target} exists" + (", older than its input (changed since?)" if older else "")
            + " (use --overwrite)")


def select_jobs(paths: list[Path], output: Path | str | None = None, recursive: bool = False,
                overwrite: bool = False, lang: str = "ru") -> Selection:
    """Expand files and folders into jobs; missing paths fail, finished outputs are skipped.

    `output` is a folder when it ends with '/', is an existing folder or has no extension;
    otherwise it names the file of a single input, with a subtitle extension of that input's
    format (OutputError otherwise, before any file is read). An input whose output is an
    earlier input's (the same file however it is spelt) fails, as does one whose output
    cannot be written there."""
    selection = Selection()
    as_folder = isinstance(output, str) and output.endswith(("/", os.sep))
    output = Path(output) if output is not None else None
    single_output: Path | None = None
    if output is not None and not as_folder and not output.is_dir():
        if not (len(paths) == 1 and paths[0].is_file()):
            if output.suffix.lower() in EXTENSIONS or output.exists():
                what = "several inputs" if len(paths) > 1 else "a folder"
                raise OutputError(f"-o {output}: with {what} the output must be a folder")
        elif output.suffix or output.exists():
            single_output = _single_output(output, paths[0])
    seen: set[Path] = set()
    claimed: dict[Path, Path] = {}  # each output (resolved) and the input it is for
    for path in paths:
        if not path.exists():
            selection.failed.append((path, "no such file or folder"))
            continue
        if path.is_dir():
            found = _subtitle_files(path, recursive)
            candidates = [(f, f.parent.relative_to(path)) for f in found]
            sources = [f for f, _ in candidates if not is_translation(f, lang)]
            if not sources:
                hint = "" if recursive else " (use --recursive for subfolders)"
                selection.failed.append((path, f"no subtitle files to translate{hint}"))
                continue
        else:
            candidates = [(path, Path())]
        for source, relative in candidates:
            if is_translation(source, lang):
                if path.is_file():
                    selection.skipped.append((source, f"is itself a .{lang}{source.suffix} "
                                                      "translation"))
                continue
            if single_output is not None:
                target = single_output
            elif output is not None:
                target = output / relative / output_name(source, lang)
            else:
                target = source.with_name(output_name(source, lang))
            key = _resolved(source)
            if key in seen:
                continue
            seen.add(key)
            resolved = _resolved(target)
            if resolved == key:
                selection.failed.append((source, "output would overwrite the input"))
                continue
            if resolved in claimed:
                selection.failed.append((source, f"not translated: its output {target} is "
                                                 f"also that of {claimed[resolved]} (rename "
                                                 "one of them, or translate it alone with -o)"))
                continue
            claimed[resolved] = source
            if target.exists() and not target.is_dir() and not overwrite:
                selection.skipped.append((source, _exists(source, target)))
            elif problem := unwritable(target):
                selection.failed.append((source, problem))
            else:
                selection.jobs.append(Job(source, target, named=single_output is not None))
    return selection
