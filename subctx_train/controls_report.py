"""What a model's control tags do on dev (issue 28's targets), as the app asks for them:

- **forced**: friends_dev translated with each tag the bundle knows forced on every line
  (`--formality informal`...), against the untagged run: of the lines whose translation has
  forms of that kind (subctx_train.labels), the share whose forms follow the tag, and chrF, of
  all lines (the changed forms themselves move it: the references keep their own register) and
  of the lines with forms of that kind in neither translation (the other damage);
- **ctxpro formality**: the formality items (Wicks & Post 2023) translated untagged, with
  `--formality auto` (the scene's register carried, subctx.controls.RegisterCarry), and with the
  oracle tag (the register of the expected Russian form): the share whose expected form appears.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import sacrebleu

from subctx.bundle import Manifest
from subctx.contract import Translator
from subctx.controls import (
    CONTROLS,
    FORMAL,
    FORMALITY,
    INFORMAL,
    OPTIONS,
    SPEAKER_GENDER,
    control_pieces,
    register_carry,
)
from subctx.decoding import DecodeOptions
from subctx.errors import BundleError
from subctx_train.data import Document, read_documents
from subctx_train.evaluate import (
    CtxproItem,
    ctxpro_accuracy,
    read_ctxpro,
    spread_documents,
    translate_corpus,
)
from subctx_train.labels import register_label, speaker_label

LABELLERS: dict[str, Callable[[str, str], str | None]] = {
    FORMALITY: register_label,
    SPEAKER_GENDER: lambda russian, english: speaker_label(russian)}
"""The label of a translation (given its English) for each kind of control: the value its forms
say, or None."""


def _chrf(docs: list[Document], outputs: list[list[str]],
          keep: list[bool] | None = None) -> float:
    """chrF of the lines with a reference (and `keep`, one flag per line, where given)."""
    segments = [seg for doc in docs for seg in doc.segments]
    texts = [t for out in outputs for t in out]
    keep = keep or [True] * len(texts)
    pairs = [(h, seg.tgt) for seg, h, k in zip(segments, texts, keep, strict=True)
             if k and seg.tgt is not None]
    if not pairs:
        return 0.0
    return round(sacrebleu.corpus_chrf([h for h, _ in pairs], [[r for _, r in pairs]]).score, 2)


def forced_rows(engine: Translator, manifest: Manifest, docs: list[Document],
                options: DecodeOptions) -> list[dict]:
    """One row untagged, then one per value of each kind the bundle knows, forced."""
    flat = [seg.src for doc in docs for seg in doc.segments]
    base = translate_corpus(engine, docs, options)
    base_texts = [t for out in base for t in out]
    rows = [{"asked": "nothing (auto)", "chrF": _chrf(docs, base), "ΔchrF": 0.0}]
    for kind in manifest.controls:
        label = LABELLERS[kind]
        for value in CONTROLS[kind]:
            asked = replace(options, carry=None,
                            controls=control_pieces(manifest, **{kind: value}))
            outputs = translate_corpus(engine, docs, asked)
            texts = [t for out in outputs for t in out]
            labels = [label(t, s) for t, s in zip(texts, flat, strict=True)]
            had = [x for x in labels if x is not None]
            chrf = _chrf(docs, outputs)
            # the other damage: lines with forms of this kind in neither translation
            apart = [x is None and label(b, s) is None
                     for x, b, s in zip(labels, base_texts, flat, strict=True)]
            rows.append({"asked": f"{OPTIONS[kind]} {value}", "lines with forms": len(had),
                         "follow the tag %": round(100 * had.count(value) / len(had), 1)
                         if had else "", "chrF": chrf,
                         "ΔchrF": round(chrf - rows[0]["chrF"], 2),
                         "ΔchrF, lines without forms": round(
                             _chrf(docs, outputs, apart) - _chrf(docs, base, apart), 2)})
    return rows


def formality_items(ctxpro: dict[str, list[CtxproItem]]) -> list[CtxproItem]:
    return [item for name, items in ctxpro.items() if "formality" in name for item in items]


def ctxpro_rows(engine: Translator, manifest: Manifest, items: list[CtxproItem],
                options: DecodeOptions) -> list[dict]:
    """ctxpro formality accuracy untagged, with --formality auto and with the oracle tag; the
    first two also with each item's whole scene translated before its sentence (all its
    context sentences, in order, as the app translates a film: where the carry of `auto` can
    find the register an earlier line set)."""
    def accuracy(chosen: list[CtxproItem], asked: DecodeOptions, whole: bool = False
                 ) -> tuple[int, int]:
        if not chosen:
            return 0, 0
        result = ctxpro_accuracy(engine, chosen, asked, whole=whole)["all"]
        return round(result["accuracy"] * result["items"]), result["items"]

    plain = replace(options, carry=None, controls=())
    auto = replace(plain, carry=register_carry(manifest))
    rows = []
    for name, asked, whole in [("untagged", plain, False), ("--formality auto", auto, False),
                               ("untagged, whole scene", plain, True),
                               ("--formality auto, whole scene", auto, True)]:
        right, n = accuracy(items, asked, whole)
        rows.append({"ctxpro formality": name, "items": n,
                     "accuracy": round(right / n, 4) if n else ""})
    right = n = 0
    by_value = {value: [i for i in items if register_label(i.expected) == value]
                for value in (INFORMAL, FORMAL)}
    for value, chosen in by_value.items():
        r, m = accuracy(chosen, replace(plain, controls=control_pieces(manifest,
                                                                       formality=value)))
        right, n = right + r, n + m
    rows.append({"ctxpro formality": "oracle tag (the expected form's register)", "items": n,
                 "accuracy": round(right / n, 4) if n else ""})
    return rows


def controls_report(engine: Translator, manifest: Manifest, dev_root: Path,
                    options: DecodeOptions, limit: int | None = None,
                    ctxpro_limit: int | None = None) -> dict:
    """Both tables for a bundle trained with control tags; BundleError in one line for one
    without them."""
    if not manifest.controls:
        raise BundleError("this model was not trained with control tags (its subctx.json "
                          "lists no \"controls\"): nothing to measure")
    docs = spread_documents(read_documents([dev_root / "friends_dev.jsonl"]), limit)
    report = {"forced": forced_rows(engine, manifest, docs, options)}
    if FORMALITY in manifest.controls and (dev_root / "ctxpro").is_dir():
        items = formality_items(read_ctxpro(dev_root / "ctxpro", ctxpro_limit))
        report["ctxpro"] = ctxpro_rows(engine, manifest, items, options)
    return report

