"""Which files to translate and where their translations go."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from subctx.errors import SubctxError
from subctx.formats import EXTENSIONS


class OutputError(SubctxError):
    """An output location that cannot take what was asked for."""


_SOURCE_TAG = re.compile(r"\.(en|eng|english)$", re.IGNORECASE)


@dataclass
class Job:
    source: Path
    output: Path


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


def select_jobs(paths: list[Path], output: Path | None = None, recursive: bool = False,
                overwrite: bool = False, lang: str = "ru") -> Selection:
    """Expand files and folders into jobs; missing paths fail, finished outputs are skipped."""
    selection = Selection()
    single_file_output = (output is not None and output.suffix.lower() in EXTENSIONS
                          and len(paths) == 1 and paths[0].is_file())
    not_a_folder = output is not None and (output.suffix.lower() in EXTENSIONS
                                           or (output.exists() and not output.is_dir()))
    if not_a_folder and not single_file_output:
        what = "several inputs" if len(paths) > 1 else "a folder"
        raise OutputError(f"-o {output}: with {what} the output must be a folder")
    seen: set[Path] = set()
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
            if single_file_output:
                target = output
            elif output is not None:
                target = output / relative / output_name(source, lang)
            else:
                target = source.with_name(output_name(source, lang))
            key = source.resolve()
            if key in seen:
                continue
            seen.add(key)
            if target.resolve() == key:
                selection.failed.append((source, "output would overwrite the input"))
            elif target.exists() and not overwrite:
                selection.skipped.append((source, f"{target.name} exists (use --overwrite)"))
            else:
                selection.jobs.append(Job(source, target))
    return selection
