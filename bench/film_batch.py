"""A batch of films through the app as a user runs it: `subctx translate FOLDER` with context
and with `--context 0`, side by side in one run, on this CPU or a GPU (`--device cuda`:
CTranslate2 where it sees the GPU, else the same bundle through PyTorch, which the app says in
one line). The films are dev documents with their own timings (or spoken ones where they
have none), one .srt each, or synthetic films. Cues/s counts the whole command, the
model's loading included, as a user waits for it. `--also` adds rows with other options (with
context); `--rounds` runs every row that many times in turn and keeps each row's fastest.

    python bench/film_batch.py --data ../shared/data/en-ru/dev/friends_dev.jsonl --threads 2
    python bench/film_batch.py --data ../shared/data/en-ru/dev/friends_dev.jsonl --threads 2 \
        --also "--batch-size 32" --rounds 3
    python3 bench/film_batch.py --data /tmp/recipe/data/devroot/friends_dev.jsonl \\
        --device cuda --json $OUT/film_batch.json          # on the GPU machine
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from subctx.formats.timing import srt_timestamp
from subctx_train.data import read_documents
from subctx_train.report import show_table

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = {"context (as the app runs)": [], "--context 0": ["--context", "0"]}


def films_from_documents(path: Path, folder: Path, limit: int) -> int:
    """One .srt per document (its English lines as cues, with its timings; a document without
    them gets cues as long as their text at 15 characters a second plus half a second, 1-7 s,
    a quarter second apart: one context chain, as continuous dialogue is, and no more cues
    over the app's reading speed than a real film's); the first documents up to `limit`
    cues. Returns the cues."""
    cues = 0
    for n, doc in enumerate(read_documents([path])):
        lines = [s for s in doc.segments if s.src]
        if not lines or cues >= limit:
            continue
        timed = all(s.start is not None and s.end is not None for s in lines)
        times = [(s.start, s.end) for s in lines] if timed else spoken_times(lines)
        blocks = [f"{i}\n{srt_timestamp(a)} --> {srt_timestamp(b)}\n{s.src}\n"
                  for i, (s, (a, b)) in enumerate(zip(lines, times, strict=True), 1)]
        (folder / f"film{n:03d}.en.srt").write_text("\n".join(blocks), encoding="utf-8")
        cues += len(lines)
    if not cues:
        raise SystemExit(f"film_batch: no English lines in {path}")
    return cues


def spoken_times(lines: list) -> list[tuple[float, float]]:
    """(start, end) of untimed lines said one after another at 15 characters a second."""
    times, t = [], 0.0
    for line in lines:
        duration = min(7.0, max(1.0, len(line.src) / 15 + 0.5))
        times.append((round(t, 3), round(t + duration, 3)))
        t += duration + 0.25
    return times


def synthetic_films(folder: Path, films: int, cues: int) -> int:
    from translate_speed import synthetic_film  # bench/ is this script's folder

    for n in range(films):
        (folder / f"film{n:03d}.en.srt").write_text(synthetic_film(cues, seed=n),
                                                    encoding="utf-8")
    return films * cues


def run(films: Path, extra: list[str], model: Path, device: str, threads: int) -> dict:
    """`subctx translate` over a fresh copy of the films: seconds, files written and what the
    app said of its speed and backend."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "films"
        shutil.copytree(films, folder)
        command = [sys.executable, "-m", "subctx.cli", "translate", str(folder), "--model",
                   str(model), "--device", device, "--threads", str(threads), *extra]
        env = {**os.environ, "COLUMNS": "200",
               "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
        began = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, env=env)
        seconds = time.perf_counter() - began
        written = len(list(folder.glob("*.ru.srt")))
    said = (done.stdout + done.stderr).strip().splitlines()
    if done.returncode != 0:
        raise SystemExit(f"film_batch: {' '.join(command)} failed: {said[-1] if said else ''}")
    # the app's own count (decoding alone) and which backend served the bundle
    said = [line.strip() for line in said
            if "cues/s" in line or "PyTorch" in line or "CTranslate2" in line]
    return {"seconds": round(seconds, 2), "written": written, "said": said}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=ROOT / "assets/models/en-ru")
    parser.add_argument("--data", type=Path, help="Dev documents (.jsonl) to make films of.")
    parser.add_argument("--cues", type=int, default=1344,
                        help="With --data: the first documents up to this many cues; without: "
                             "cues per synthetic film.")
    parser.add_argument("--films", type=int, default=4, help="Synthetic films (no --data).")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda", "auto"])
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--json", type=Path, help="Write the rows here.")
    parser.add_argument("--also", action="append", default=[], metavar="OPTIONS",
                        help="Another row: the app with context and these options "
                             "(e.g. '--batch-size 32'); repeatable.")
    parser.add_argument("--rounds", type=int, default=1,
                        help="Run every row this many times in turn; keep each one's fastest.")
    args = parser.parse_args()
    context, plain = SETTINGS.items()
    settings = dict([context, *((f"context, {extra}", shlex.split(extra)) for extra in args.also),
                     plain])
    with tempfile.TemporaryDirectory() as tmp:
        films = Path(tmp)
        cues = (films_from_documents(args.data, films, args.cues) if args.data
                else synthetic_films(films, args.films, args.cues))
        count = len(list(films.glob("*.srt")))
        fastest: dict[str, dict] = {}
        for _ in range(max(1, args.rounds)):
            for name, extra in settings.items():
                result = run(films, extra, args.model, args.device, args.threads)
                if name not in fastest or result["seconds"] < fastest[name]["seconds"]:
                    fastest[name] = result
        rows = [{"setting": name, "films": count, "cues": cues, **result,
                 "rounds": max(1, args.rounds), "cues/s": round(cues / result["seconds"], 1)}
                for name, result in fastest.items()]
    base = rows[-1]["seconds"]
    for row in rows:
        row["x no context"] = round(row["seconds"] / base, 2)
    show_table(f"{count} films, {cues} cues, {args.device}, {args.model.name}",
               [{k: v for k, v in r.items() if k != "said"} for r in rows])
    for row in rows:
        print(f"{row['setting']}: {' | '.join(row['said'])}")
    if args.json:
        args.json.write_text(json.dumps({"device": args.device, "model": str(args.model),
                                         "rows": rows}, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
