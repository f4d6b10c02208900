"""Evaluation runs and their tables: one function per kind of test, one for the dev table."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table

from subctx.backends import open_backend
from subctx.contract import Translator
from subctx.decoding import DecodeOptions
from subctx_train.data import DataError, Document, read_documents, reverse_documents
from subctx_train.evaluate import (
    RandomContext,
    bleu_chrf,
    contrastive_accuracy,
    ctxpro_accuracy,
    read_ctxpro,
    read_voita,
    spread_documents,
    translate_corpus,
)

console = Console(stderr=True)


def _progress() -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    console=console, transient=True)


def run_bleu(engine: Translator, files: list[Path], context: int | None, max_gap: float = 7.0,
             beam: int = 4, limit: int | None = None,
             hypotheses: Path | None = None) -> list[dict]:
    """BLEU and chrF per file, in the model's direction (a Russian-to-English model translates
    the Russian sides against the English ones); `hypotheses`: a folder to write each file's
    translations to (NAME.txt, one segment per line, document order) for comparing two runs."""
    rows = []
    options = DecodeOptions.for_model(engine.manifest.context, context, max_gap,
                                      beam_size=beam)  # as the app runs this model
    for file in files:
        docs = spread_documents(read_documents([file]), limit)
        if engine.manifest.source_lang == "ru":  # a back-translation model: Russian in
            docs = reverse_documents(docs)
        scorable(file, docs)
        total = sum(len(d.segments) for d in docs)
        with _progress() as progress:
            task = progress.add_task(f"translate {Path(file).stem}", total=total)
            start = time.perf_counter()
            outputs = translate_corpus(engine, docs, options,
                                       lambda n, t=task: progress.advance(t, n))
            seconds = time.perf_counter() - start
        score = bleu_chrf(Path(file).stem, docs, outputs)
        if hypotheses is not None:
            hypotheses.mkdir(parents=True, exist_ok=True)
            lines = [text.replace("\n", " ") for out in outputs for text in out]
            (hypotheses / f"{score.name}.txt").write_text("\n".join(lines) + "\n",
                                                         encoding="utf-8")
        rows.append({"data": score.name, "context": options.context, "sentences": score.sentences,
                     "bleu": score.bleu, "chrf": score.chrf,
                     "sentences_per_s": round(total / seconds, 1),
                     "signature_bleu": score.signature_bleu,
                     "signature_chrf": score.signature_chrf})
    return rows


def scorable(file: Path, docs: list[Document]) -> None:
    """DataError unless every segment of `docs` has a source to translate and some have a
    reference to score against (the documents of `file`, in the model's direction)."""
    for doc in docs:
        for number, seg in enumerate(doc.segments, 1):
            if not isinstance(seg.src, str):
                raise DataError(f"{doc.where}: segment {number} has no source text to "
                                f"translate ({json.dumps(seg.src)})")
    if not any(seg.tgt is not None for doc in docs for seg in doc.segments):
        raise DataError(f"{file}: no segment with a reference translation to score against "
                        '("tgt" is null or missing everywhere)')


def run_contrastive(engine: Translator, root: Path, tests: list[str] | None,
                    context: int | None) -> list[dict]:
    k = engine.max_context if context is None else context
    names = tests or sorted(p.stem for p in Path(root).glob("**/consistency_testsets/*.json")) \
        or sorted(p.stem for p in Path(root).glob("*.json"))
    rows = []
    for name in names:
        groups = read_voita(root, name)
        with _progress() as progress:
            task = progress.add_task(f"score {name}", total=len(groups))
            result = contrastive_accuracy(engine, groups, k,
                                          lambda n, t=task: progress.advance(t, n))
        for key, value in result.items():
            rows.append({"test": name, "context": k, "subset": key, **value})
    return rows


def run_ctxpro(engine: Translator, root: Path, limit: int | None, context: int | None,
               beam: int = 4) -> list[dict]:
    options = DecodeOptions.for_model(engine.manifest.context, context, beam_size=beam)
    rows = []
    for name, items in read_ctxpro(root, limit).items():
        with _progress() as progress:
            task = progress.add_task(f"ctxpro {name}", total=len(items))
            result = ctxpro_accuracy(engine, items, options,
                                     lambda n, t=task: progress.advance(t, n))
        for key, value in result.items():
            rows.append({"evalset": name, "context": options.context, "rule": key, **value})
    return rows


def show_table(title: str, rows: list[dict]) -> None:
    if not rows:
        console.print(f"{title}: nothing evaluated")
        return
    columns = list(dict.fromkeys(c for row in rows for c in row if not c.startswith("signature")))
    table = Table(title=title)
    for column in columns:  # a column some rows lack is justified by the first that has it
        first = next(row[column] for row in rows if column in row)
        table.add_column(column, justify="right" if isinstance(first, float | int) else "left")
    for row in rows:
        table.add_row(*(str(row.get(c, "")) for c in columns))
    Console().print(table)


def _ctxpro_overall(rows: list[dict]) -> float:
    right = sum(r["accuracy"] * r["items"] for r in rows if r["rule"] == "all")
    total = sum(r["items"] for r in rows if r["rule"] == "all")
    return round(right / max(1, total), 4)


def evaluate_condition(engine: Translator, dev_root: Path, context: int, ctxpro_limit: int,
                       beam: int, random_context: bool = False,
                       bleu_limit: int | None = None) -> dict:
    """All dev measurements of one bundle at one context setting (optionally with a random
    context sentence instead of the real one: the control of Voita et al. 2018)."""
    if random_context:
        docs = read_documents([dev_root / "friends_dev.jsonl", dev_root / "flores_dev.jsonl"])
        pool = [(s.src, s.tgt) for d in docs for s in d.segments if s.tgt]
        engine = RandomContext(engine, pool)
    bleu = run_bleu(engine, [dev_root / "friends_dev.jsonl", dev_root / "flores_dev.jsonl"],
                    context, beam=beam, limit=bleu_limit)
    voita_root = dev_root / "voita" / "mjpost"
    contrastive = run_contrastive(engine, voita_root, ["deixis_dev", "lex_cohesion_dev"],
                                  min(context, engine.max_context))
    ctxpro = run_ctxpro(engine, dev_root / "ctxpro", ctxpro_limit, context, beam)
    by_test = {r["test"]: r["accuracy"] for r in contrastive if r["subset"] == "all"}
    return {
        "context": f"{context} (random)" if random_context else context,
        "friends_bleu": bleu[0]["bleu"], "friends_chrf": bleu[0]["chrf"],
        "flores_bleu": bleu[1]["bleu"], "flores_chrf": bleu[1]["chrf"],
        "deixis_dev": by_test.get("deixis_dev"),
        "lex_cohesion_dev": by_test.get("lex_cohesion_dev"),
        "ctxpro_dev": _ctxpro_overall(ctxpro),
        "sentences_per_s": bleu[0]["sentences_per_s"],
        "measured_on": {"friends_sentences": bleu[0]["sentences"],
                        "flores_sentences": bleu[1]["sentences"],
                        "ctxpro_items": sum(r["items"] for r in ctxpro if r["rule"] == "all"),
                        "beam": beam},
        "details": {"bleu_chrf": bleu, "contrastive": contrastive, "ctxpro": ctxpro},
    }


def full_dev_report(models: list[Path], dev_root: Path, ctxpro_limit: int = 300, beam: int = 4,
                    threads: int = 0, record: bool = False, random_control: bool = False,
                    bleu_limit: int | None = None, device: str = "cpu",
                    more_context: Sequence[int] = ()) -> dict:
    """Each bundle with its default context, without context, with a random context sentence
    (`random_control`) and with each K of `more_context` the model can read."""
    from subctx_train.bundle_card import record_scores

    report: dict = {"models": {}}
    for model in models:
        engine = open_backend(model, device=device, compute_type="auto", threads=threads)
        conditions = []
        default_k = engine.manifest.context.default_k
        more = [k for k in dict.fromkeys(more_context)
                if k not in (0, default_k) and k <= engine.max_context]
        for k in ([default_k, 0, *more] if engine.max_context else [0]):
            console.print(f"[bold]{model}[/bold] context={k}")
            conditions.append(evaluate_condition(engine, dev_root, k, ctxpro_limit, beam,
                                                 bleu_limit=bleu_limit))
            conditions[-1]["measured_on"]["threads"] = threads
        if random_control and engine.max_context:
            console.print(f"[bold]{model}[/bold] context={default_k}, random")
            conditions.append(evaluate_condition(engine, dev_root, default_k, ctxpro_limit, beam,
                                                 random_context=True, bleu_limit=bleu_limit))
        report["models"][str(model)] = conditions
        if record:
            record_scores(model, conditions)
    return report


DEV_COLUMNS = [("friends_bleu", "friends BLEU"), ("friends_chrf", "friends chrF"),
               ("flores_bleu", "flores BLEU"), ("flores_chrf", "flores chrF"),
               ("deixis_dev", "deixis"), ("lex_cohesion_dev", "lex. coh."),
               ("ctxpro_dev", "ctxpro"), ("sentences_per_s", "sent/s")]


def dev_table_markdown(report: dict) -> str:
    head = "| model | context | " + " | ".join(name for _, name in DEV_COLUMNS) + " |"
    lines = [head, "|" + "---|" * (len(DEV_COLUMNS) + 2)]
    for model, conditions in report["models"].items():
        for c in conditions:
            cells = " | ".join(str(c.get(key)) for key, _ in DEV_COLUMNS)
            lines.append(f"| {Path(model).name} | {c['context']} | {cells} |")
    return "\n".join(lines)


def show_dev_table(report: dict) -> None:
    table = Table(title="dev results")
    table.add_column("model")
    table.add_column("context", justify="right")
    for _, name in DEV_COLUMNS:
        table.add_column(name, justify="right")
    for model, conditions in report["models"].items():
        for c in conditions:
            table.add_row(Path(model).name, str(c["context"]),
                          *(str(c.get(key)) for key, _ in DEV_COLUMNS))
    Console(width=160).print(table)
    print(dev_table_markdown(report))
