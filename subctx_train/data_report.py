"""What a run's data is made of under its corpus weights: for each corpus (doc-id prefix), or
each part of one that a weight names apart (a domain, a doc-id prefix, the machine-drafted or
synthetic documents), its pairs after the trainer's filters and its share of an epoch's
examples and target characters (`subctx-train data-report`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from subctx_train.data import (
    WeightUse,
    filtered,
    jsonl_files,
    machine_drafted,
    read_jsonl,
    warn,
    weight_rule,
)


@dataclass
class Row:
    corpus: str  # the doc-id prefix up to the first '/' (by domain: the domain)
    part: str  # what decides the weight besides the corpus ('' if the corpus itself or none)
    weight: float  # examples per pair (a mean where a row mixes weights)
    files: list[str] = field(default_factory=list)
    domains: list[str] = field(default_factory=list)
    docs: int = 0
    pairs: int = 0
    target_chars: int = 0
    examples: float = 0.0  # expected examples per epoch: pairs x weight
    weighted_chars: float = 0.0
    share: float = 0.0  # of all examples per epoch
    char_share: float = 0.0  # of all target characters per epoch (long segments weigh more)

    @property
    def name(self) -> str:
        return f"{self.corpus} · {self.part}" if self.part else self.corpus


BY = ("part", "corpus", "domain")  # what a row is: a weighted part of a corpus, or all of it


def corpus_rows(paths: Iterable[str | Path], weights: dict[str, float], by: str = "part"
                ) -> tuple[list[Row], dict[str, int]]:
    """One Row per corpus part (or corpus, or domain: `by`), in first-seen order, and the
    filter counts (the trainer's filter_documents, so pairs are what training sees)."""
    if by not in BY:
        raise ValueError(f"by: one of {', '.join(BY)}, not {by!r}")
    rows: dict[tuple, Row] = {}
    counts: dict[str, int] = {}
    use = WeightUse(weights)
    for file in jsonl_files(paths):
        for doc in filtered(read_jsonl(file), counts):
            use.add(doc)
            rule, weight = weight_rule(doc, weights)
            tags = [t for t, on in (("machine-drafted", machine_drafted(doc)),
                                    ("synthetic", doc.synthetic)) if on]
            part = " ".join([rule if rule != doc.corpus else "", *tags]).strip()
            key = {"part": (doc.corpus, part, weight), "corpus": (doc.corpus, "", 0.0),
                   "domain": (doc.domain or "-", "", 0.0)}[by]
            row = rows.get(key)
            if row is None:
                row = rows[key] = Row(*key)
            if file.name not in row.files:
                row.files.append(file.name)
            if doc.domain not in row.domains:
                row.domains.append(doc.domain)
            row.docs += 1
            targets = [s.tgt for s in doc.segments if s.tgt is not None]
            chars = sum(map(len, targets))
            row.pairs += len(targets)
            row.target_chars += chars
            row.examples += len(targets) * weight
            row.weighted_chars += chars * weight
    unmatched = use.unmatched()
    if unmatched:
        warn(unmatched)
    out = list(rows.values())
    examples = sum(r.examples for r in out) or 1.0
    chars = sum(r.weighted_chars for r in out) or 1.0
    for r in out:
        r.weight = round(r.examples / r.pairs, 3) if r.pairs else 0.0
        r.share = r.examples / examples
        r.char_share = r.weighted_chars / chars
    return out, counts


def report(rows: list[Row], counts: dict[str, int], weights: dict[str, float]) -> dict:
    total_pairs = sum(r.pairs for r in rows)
    return {"weights": weights, "pairs": total_pairs,
            "examples_per_epoch": round(sum(r.examples for r in rows)),
            "filtered": counts,
            "rows": [{"name": r.name, **asdict(r)} for r in rows]}


def sorted_rows(rows: list[Row]) -> list[Row]:
    return sorted(rows, key=lambda r: -r.examples)


def markdown(rows: list[Row]) -> str:
    """The table as Markdown (docs/recipe.md)."""
    lines = ["| corpus | files | domains | pairs | weight | examples / epoch | share | "
             "target chars share |", "|---|---|---|---:|---:|---:|---:|---:|"]
    for r in sorted_rows(rows):
        lines.append(f"| {r.name} | {', '.join(f.removesuffix('.jsonl') for f in r.files)} | "
                     f"{', '.join(r.domains)} | {r.pairs:,} | {r.weight:g} | "
                     f"{round(r.examples):,} | {100 * r.share:.1f} % | "
                     f"{100 * r.char_share:.1f} % |")
    pairs = sum(r.pairs for r in rows)
    examples = round(sum(r.examples for r in rows))
    whole = "100 %" if pairs else ""  # no pair: no share of anything
    lines.append(f"| **all** | | | **{pairs:,}** | | **{examples:,}** | {whole} | {whole} |")
    return "\n".join(lines)


def show(rows: list[Row], title: str) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    for name, justify in (("corpus", "left"), ("files", "left"), ("domains", "left"),
                          ("pairs", "right"), ("weight", "right"), ("examples", "right"),
                          ("share", "right"), ("chars share", "right")):
        table.add_column(name, justify=justify)
    for r in sorted_rows(rows):
        table.add_row(r.name, ", ".join(f.removesuffix(".jsonl") for f in r.files),
                      ", ".join(r.domains), f"{r.pairs:,}", f"{r.weight:g}",
                      f"{round(r.examples):,}", f"{100 * r.share:.1f} %",
                      f"{100 * r.char_share:.1f} %")
    whole = "100 %" if sum(r.pairs for r in rows) else ""  # no pair: no share of anything
    table.add_row("all", "", "", f"{sum(r.pairs for r in rows):,}", "",
                  f"{round(sum(r.examples for r in rows)):,}", whole, whole, style="bold")
    Console(width=160).print(table)
