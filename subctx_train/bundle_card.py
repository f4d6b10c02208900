"""From a training run to a bundle: manifest fields, the model card, recorded dev scores."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import torch

from subctx.bundle import MANIFEST, ContextSettings, Manifest, load_bundle, write_manifest
from subctx.controls import CONTROLS, known_controls, tag_piece
from subctx.decoding.scope import SCOPES
from subctx.nn import architecture
from subctx.nn.config import ModelConfig
from subctx.nn.transformer import Transformer
from subctx_train.checkpoint import (
    check_output_folder,
    list_checkpoints,
    load_model_state,
    read_meta,
    replaced_folder,
    save_chunked,
)
from subctx_train.config import TrainConfig
from subctx_train.runs import pretraining_stages, run_progress, run_record, stage_data
from subctx_train.train import build_model, load_final_model


def _load(source: Path) -> tuple[Transformer, TrainConfig, Path, dict]:
    """A model from a run folder (averaged weights) or from one checkpoint folder; `extra`
    says which weights (and, under "unfinished", why they may not be the run's last word)."""
    source = Path(source)
    if (source / "meta.json").exists():
        meta = read_meta(source)
        cfg = TrainConfig.from_dict(meta["config"])
        model = build_model(cfg, ModelConfig(**meta["model"]))
        model.load_state_dict(load_model_state(source))
        return model.eval(), cfg, source.parent.parent, {"weights": source.name}
    model, cfg = load_final_model(source)
    final = json.loads((source / "final.json").read_text()) \
        if (source / "final.json").exists() else {}
    chosen = final.get("averaged_checkpoints", [])
    weights = final.get("weights") or (f"average of {', '.join(chosen)}" if len(chosen) > 1
                                       else chosen[0] if chosen else "last checkpoint")
    extra = {"weights": weights}
    unfinished = _unfinished(source, chosen)
    if unfinished:
        extra["unfinished"] = unfinished
        if not _has_final(source):  # load_final_model took the newest checkpoint
            extra["weights"] = f"{list_checkpoints(source)[-1].name}, the last checkpoint of " \
                               "an unfinished run"
    return model, cfg, source, extra


def _has_final(run_dir: Path) -> bool:
    """Whether a run folder has final weights (`checkpoint.load_final` reads them)."""
    return (run_dir / "final.safetensors").exists() or any(run_dir.glob("final-*.safetensors"))


def _step(checkpoint: str) -> int:
    return int(checkpoint.split("-")[1])


def _unfinished(run_dir: Path, chosen: list[str]) -> str | None:
    """Why a run folder's weights may not be what its training would have ended with: it has
    no final weights (killed, or still training), or they are older than its newest
    checkpoint (resumed, not finished again); None for a finished run."""
    found = list_checkpoints(run_dir)
    if not found:
        return None
    last = found[-1].name
    if not _has_final(run_dir):
        return (f"{run_dir} has not finished training (no final weights): exporting its last "
                f"checkpoint, {last}")
    if chosen and max(map(_step, chosen)) < _step(last):
        return (f"{run_dir}: its final weights ({', '.join(chosen)}) are older than its last "
                f"checkpoint, {last} (resumed and not finished again?); exporting the final "
                f"weights (`subctx-train finalize {run_dir}` makes new ones)")
    return None


def _warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr, flush=True)


def _training_info(run_dir: Path, cfg: TrainConfig, extra: dict) -> dict:
    info = {"config": cfg.to_dict(), **extra,
            "parameters": None, "steps": None, "minutes": None, "device": None}
    info.update(run_progress(run_dir))
    record = run_record(run_dir)
    stages = pretraining_stages(run_dir)
    if stages:  # a fine-tuned model: its budget includes the runs it started from
        info["init_from"] = record.get("init_from")
        info["pretraining"] = stages
    resumed = record.get("resumed")
    if resumed:  # resumed with other settings: the card says from which step
        info["resumed"] = resumed
    return info


def _field_changes(t: dict, field: str) -> list[tuple[int, object, object]]:
    """(step, before, after) of each resume that changed a config field."""
    return [(r["at_step"], *r["changed"][field]) for r in t.get("resumed") or []
            if field in r.get("changed", {})]


def _resumes(t: dict) -> str:
    """'; resumed at step N with FIELD a → b, ...' for each resume that changed settings
    (other than its time budget)."""
    parts = []
    for r in t.get("resumed") or []:
        shown = [f"{k} {a} → {b}" for k, (a, b) in r.get("changed", {}).items()
                 if k != "budget_minutes"]
        if shown:
            parts.append(f"; resumed at step {r['at_step']:,} with {', '.join(shown)}")
    return "".join(parts)


def _stages(pre: list | dict | None) -> list[dict]:
    """The recorded stages before a run's: a list (bundles before chains recorded one dict)."""
    return pre if isinstance(pre, list) else [pre] if pre else []


def export_run(source: Path, out: Path, quantize: str | None = None, max_gap: float = 7.0,
               default_k: int = 1, length_penalty: float = 1.0,
               backend: str | None = None, guard: bool = True, scope: str = "all",
               max_k: int | None = None,
               warn: Callable[[str], object] | None = _warn) -> Path:
    """A run (or checkpoint) as a bundle in `out`. `max_k`: the most context sentences the app
    may give the model (default: the most it was trained with); only a concatenation model can
    read more than that. The bundle is built beside `out` and replaces it whole once complete
    (`replaced_folder`); `out` may be absent, empty or a bundle, anything else is refused.
    `warn` gets one line where the weights may not be what the user means (an unfinished run's
    last checkpoint, final weights older than the run's last checkpoint); by default it is
    printed on stderr ("warning: ..."), None says nothing (the manifest records it under
    info.training.unfinished either way)."""
    check_output_folder(out, MANIFEST)  # before loading anything
    model, cfg, run_dir, extra = _load(source)
    if extra.get("unfinished") and warn is not None:
        warn(extra["unfinished"])
    info = _training_info(run_dir, cfg, extra)
    info["parameters"] = sum(p.numel() for p in model.parameters())
    info["vocabulary"] = model.cfg.vocab_size  # the pieces it has (tags added later included)
    run_config = json.loads((run_dir / "config.json").read_text())
    info["device"] = run_config.get("hardware") or ("cuda" if torch.cuda.is_available()
                                                    else "cpu")
    info["data"] = run_config.get("data")
    info["quantization"] = quantize or "float32"
    arch = architecture(cfg.architecture)
    backend = backend or arch.backend
    if backend not in EXPORTERS:
        raise ValueError(f"unknown backend {backend!r} (use {', '.join(EXPORTERS)})")
    multi_encoder = arch.separate_context  # reads its context apart
    max_k = cfg.max_k if max_k is None else max_k
    if multi_encoder and max_k > cfg.max_k:
        raise ValueError(f"--max-k {max_k}: a {cfg.architecture} model reads at most the "
                         f"{cfg.max_k} context sentence(s) it was trained with")
    source_lang, target_lang = cfg.languages
    manifest = Manifest(
        architecture=cfg.architecture, backend=backend,
        source_lang=source_lang, target_lang=target_lang,
        max_positions=model.cfg.max_positions, length_penalty=length_penalty,
        source_spm="spm.model", target_spm="spm.model",
        context=ContextSettings(max_k=max_k, default_k=min(default_k, max_k),
                                max_gap=max_gap,
                                target_side="none" if multi_encoder else cfg.target_context,
                                segment_shift=cfg.segment_shift, guard=guard, scope=scope),
        info={"training": info}, controls=trained_controls(cfg, run_dir / "spm.model"))
    with replaced_folder(out, MANIFEST) as staged:
        EXPORTERS[backend](model, run_dir / "spm.model", manifest, staged, quantize)
        (staged / "README.md").write_text(model_card(load_bundle(staged).manifest),
                                          encoding="utf-8")
    return Path(out)


def trained_controls(cfg: TrainConfig, spm_model: Path) -> list[str]:
    """The kinds of control tag a run trained with (subctx.controls): those whose pieces its
    tokenizer has, where its examples were tagged at all (control_share > 0)."""
    if not cfg.control_share:
        return []
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=str(spm_model))
    return known_controls(lambda piece: sp.piece_to_id(piece) != sp.unk_id())


def export_torch_bundle(model: Transformer, spm_model: Path, manifest: Manifest,
                        out: Path) -> Path:
    """Bundle for the PyTorch backend: weights in <=16 MiB safetensors chunks + model.json,
    built beside `out` and replacing it whole once complete (as `export.export_bundle`)."""
    out = check_output_folder(out, MANIFEST)
    with replaced_folder(out, MANIFEST) as staged:
        write_torch_bundle(model, spm_model, manifest, staged)
    return out


def write_torch_bundle(model: Transformer, spm_model: Path, manifest: Manifest,
                       folder: Path) -> Path:
    """The PyTorch bundle's files, written into `folder` (new or empty)."""
    import sentencepiece as spm

    pieces = spm.SentencePieceProcessor(model_file=str(spm_model)).get_piece_size()
    if pieces != model.cfg.vocab_size:
        raise ValueError(f"tokenizer has {pieces} pieces, model {model.cfg.vocab_size}")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    save_chunked(model.state_dict(), folder, "model")
    (folder / "model.json").write_text(json.dumps(
        {"architecture": manifest.architecture, "model": model.cfg.to_dict()}, indent=1))
    shutil.copyfile(spm_model, folder / manifest.source_spm)
    write_manifest(folder, manifest)
    return folder


def _ctranslate2_bundle(model: Transformer, spm_model: Path, manifest: Manifest, folder: Path,
                        quantize: str | None) -> Path:
    from subctx_train.export import write_bundle  # needs ctranslate2; torch bundles do not

    return write_bundle(model, spm_model, manifest, folder, quantization=quantize)


def _torch_bundle(model: Transformer, spm_model: Path, manifest: Manifest, folder: Path,
                  quantize: str | None) -> Path:
    manifest.info["training"]["quantization"] = "float32"  # what the PyTorch backend runs
    return write_torch_bundle(model, spm_model, manifest, folder)


# one bundle writer per serving backend (subctx.backends.BACKENDS): the files, into a
# new folder that export_run then puts in place
EXPORTERS = {"ctranslate2": _ctranslate2_bundle, "torch": _torch_bundle}


def record_scores(bundle_dir: Path, conditions: list[dict]) -> None:
    """Store measured dev scores in the manifest and refresh the model card."""
    bundle = load_bundle(bundle_dir)
    scores = {f"context={c['context']}": {k: v for k, v in c.items() if k != "details"}
              for c in conditions}
    manifest = replace(bundle.manifest, scores=scores)
    write_manifest(bundle_dir, manifest)
    (Path(bundle_dir) / "README.md").write_text(model_card(manifest), encoding="utf-8")


def _budget(t: dict) -> str:
    """How long and where the model was trained, pre-training included."""
    hardware = _hardware(t.get("device"))
    precision = t.get("precision", "fp32")
    pre = t.get("pretraining")
    if not pre:
        epochs = t.get("epochs")
        passes = f"{epochs} full epochs" if epochs else "less than one epoch"
        return (f"{t.get('steps')} steps ({passes}), {t.get('minutes')} min on {hardware} "
                f"({precision} precision)")
    stages = _stages(pre)
    where = [_hardware(s.get("device")) or hardware for s in stages] + [hardware]
    mixed = len(set(where)) > 1  # then each stage says where it ran
    parts, done = [], 0
    for i, stage in enumerate(stages):
        steps = (stage.get("steps") or 0) - done
        done = stage.get("steps") or 0
        what = (f"{stage.get('epochs')} full epochs, " if i == 0 else "")
        on = f" on {where[i]}" if mixed else ""
        parts.append(f"{steps} steps ({what}{stage.get('minutes')} min{on}) as a "
                     f"{stage.get('architecture')} model")
    on = f" on {hardware}" if mixed else ""
    parts.append(f"{(t.get('steps') or 0) - done} steps ({t.get('minutes')} min{on}) of "
                 f"fine-tuning as this model (from {t.get('init_from')})")
    minutes = [s.get("minutes") or 0 for s in stages] + [t.get("minutes") or 0]
    total = round(sum(minutes), 1)
    if not mixed:
        return (", then ".join(parts) + f"; {total} min in all on {hardware} "
                f"({precision} precision)")
    per = {}
    for device, m in zip(where, minutes, strict=True):
        per[device] = per.get(device, 0) + m
    split = ", ".join(f"{round(m, 1)} min on {device}" for device, m in per.items())
    return ", then ".join(parts) + f"; {total} min in all ({split}; {precision} precision)"


def _hardware(device: str | None) -> str | None:
    # bundles from before runs recorded their hardware say only "cpu" (those were 2 cores)
    return "2 CPU cores, no GPU" if device == "cpu" else device


def _prefix_training(cfg: dict) -> str:
    """What the previous translations were in training, where not always the reference."""
    parts = [f"{what} {share:.0%} of the time" for share, what in
             ((cfg.get("own_context") or 0, "the model's own translation (where there is one)"),
              (cfg.get("noisy_context") or 0, "cut short or with words dropped")) if share]
    return f"; the previous translation in training: {', '.join(parts)}" if parts else ""


def _data(data: dict | None, weights: dict, stages: list | dict | None = None) -> str:
    """The data line of the card, from what the training run recorded (and what the stages
    before it trained on, where they saw other data)."""
    return _run_data(data, weights) + _earlier_data(data, stages)


def _earlier_data(data: dict | None, stages: list | dict | None) -> str:
    seen = [s for s in _stages(stages) if "pairs" in s and stage_data(s) != stage_data(data)]
    if not seen:
        return ""
    return " Before: " + "; ".join(
        f"{s['pairs']:,} pairs ({s.get('synthetic_pairs', 0):,} back-translated) for "
        f"{s.get('architecture')} steps up to {s.get('steps')}" for s in seen) + "."


def _run_data(data: dict | None, weights: dict) -> str:
    if not data:  # bundles from before runs recorded their data
        return ("../shared/data/en-ru/train (≈102k pairs: Friends, Three Plus One, WMT "
                "general test sets, bilinguator books, TICO-19, 3Blue1Brown, OPUS-MT test sets, "
                "NTREX-128, ctxpro dev documents); dev for early stopping: friends_dev + "
                "flores_dev.")
    corpora = ", ".join(f"{name} {n:,}" for name, n in data["pairs_by_corpus"].items())
    weighting = ("; corpus weights (copies per epoch): "
                 + ", ".join(f"{k} {v:g}" for k, v in weights.items())) if weights else ""
    return (f"{data['pairs']:,} training pairs ({data['synthetic_pairs']:,} back-translated, "
            f"tagged), ≈{data['examples_per_epoch']:,} examples per epoch{weighting}. By "
            f"corpus: {corpora}. Files: {', '.join(data['sources']) or 'not recorded'}.")


def _controls_line(manifest: Manifest, cfg: dict, t: dict | None = None) -> str:
    """What the card says of control tags: which ones the model knows and how it learnt them."""
    if not manifest.controls:
        return ("none: trained without them, so `--formality` and `--speaker-gender` are "
                "refused (auto only).")
    words = {"formality": "formality (`--formality informal|formal`: {} / {})",
             "speaker_gender": "the speaker's gender (`--speaker-gender masculine|feminine`: "
                               "{} / {})"}
    known = [words[kind].format(*(f"`{tag_piece(v, manifest.special_tokens)}`"
                                  for v in CONTROLS[kind]))
             for kind in manifest.controls if kind in words]
    t = t or {}
    changes = _field_changes(t, "control_share")
    share = changes[0][1] if changes else cfg.get("control_share")
    later = "".join(f" ({after:.0%} from step {step:,})" for step, _, after in changes)
    trained = (f"; {share:.0%}{later} of the training sources whose Russian shows one (ты / вы, я "
               "сделал / сделала: subctx_train.labels) started with its tag, the rest with none, "
               "so the model also translates without them" if share else "")
    return " and ".join(known) + trained + "."


def model_card(manifest: Manifest) -> str:
    t = manifest.info.get("training", {})
    cfg = t.get("config", {})
    ctx = manifest.context
    positions = (f"segment-shifted encoder positions (shift {ctx.segment_shift}; the paper "
                 "also shifts the decoder's, which CTranslate2 cannot)" if ctx.segment_shift
                 else "plain encoder positions")
    arch = architecture(manifest.architecture).card.format(cd_weight=cfg.get("cd_weight"),
                                                           positions=positions)
    weights = cfg.get("corpus_weights") or {}
    lines = [
        f"# subctx model: {manifest.source_lang}→{manifest.target_lang}, {manifest.architecture}",
        "",
        f"- **Architecture**: {arch}; pre-norm Transformer, d={cfg.get('d_model')}, "
        f"{cfg.get('enc_layers')}+{cfg.get('dec_layers')} layers, {cfg.get('n_heads')} heads, "
        f"FFN {cfg.get('ff_dim')}, shared {t.get('vocabulary') or cfg.get('vocab_size')}-piece "
        "SentencePiece "
        f"vocabulary, {t.get('parameters', 0) / 1e6:.1f}M parameters, "
        f"{t.get('quantization')} weights.",
        f"- **Context**: up to {ctx.max_k} previous sentence(s) (trained on a K mix "
        f"{cfg.get('k_probs')}{_prefix_training(cfg)}); the app uses K={ctx.default_k}"
        + (f" (up to {ctx.max_k} with `--context {ctx.max_k}`)" if ctx.max_k > ctx.default_k
           else "") + " and "
        f"a {ctx.max_gap:g} s gap rule; previous translations: {ctx.side.description}; "
        "beam search with "
        f"length penalty {manifest.length_penalty:g}; context guard "
        f"{'on' if ctx.guard else 'off'} by default (`--guard/--no-guard`); context may change "
        f"{SCOPES[ctx.scope].words} "
        f"by default (`--context-scope`).",
        f"- **Control tags**: {_controls_line(manifest, cfg, t)}",
        f"- **Data**: {_data(t.get('data'), weights, t.get('pretraining'))}",
        f"- **Training**: {_budget(t)}{_resumes(t)}; final weights: {t.get('weights')}.",
        "",
        "## Dev scores (measured on this bundle)",
        "",
    ]
    if manifest.scores:
        lines += ["| context | friends BLEU | friends chrF | flores BLEU | flores chrF | "
                  "deixis | lex. cohesion | ctxpro | sentences/s |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for key, s in manifest.scores.items():
            lines.append(
                f"| {key} | {s['friends_bleu']} | {s['friends_chrf']} | {s['flores_bleu']} | "
                f"{s['flores_chrf']} | {s['deixis_dev']} | {s['lex_cohesion_dev']} | "
                f"{s['ctxpro_dev']} | {s['sentences_per_s']} |")
        m = next(iter(manifest.scores.values())).get("measured_on", {})
        lines += ["", f"BLEU/chrF: sacrebleu defaults on friends_dev "
                  f"({m.get('friends_sentences', 'all')} sentences) / flores_dev "
                  f"({m.get('flores_sentences', 'all')} sentences), documents translated in "
                  f"order as the app does (beam {m.get('beam', 4)}, length penalty "
                  f"{manifest.length_penalty:g}). Deixis / lexical cohesion: "
                  "Voita et al. 2019 dev accuracy with the row's K context sentences (a model "
                  "that ignores context scores 0.5 / 0.462). ctxpro: share of dev items "
                  f"({m.get('ctxpro_items', 'a sample of')} in all, evenly sampled per evalset) "
                  "whose expected form appears. sentences/s: friends_dev on this 2-core CPU "
                  f"({m.get('threads') or 'default'} threads), {t.get('quantization')} weights."]
    else:
        lines.append("Not measured yet: run `subctx-train dev-report BUNDLE --record`.")
    limits = known_limits(manifest.scores, forced_prefix=ctx.target_prefix)
    lines += ["", "## Known limits", "", *limits, ""]
    return "\n".join(lines)


def _more_context(scores: dict[str, dict], default: dict) -> list[str]:
    """A line for each measured K beyond the default whose deixis is higher: what reading more
    previous lines buys and costs."""
    lines = []
    for sc in scores.values():
        k = sc.get("context")
        if sc is default or not isinstance(k, int) or k == 0:  # ('1 (random)' is a str)
            continue
        if (sc.get("deixis_dev") or 0.0) <= (default.get("deixis_dev") or 0.0):
            continue
        lines.append(
            f"- **More previous lines decide ты/вы more often**: with `--context {k}` Voita "
            f"deixis {sc.get('deixis_dev')} (K={default['context']}: "
            f"{default.get('deixis_dev')}), ctxpro {sc.get('ctxpro_dev')} "
            f"({default.get('ctxpro_dev')}), friends_dev chrF {sc.get('friends_chrf')} "
            f"({default.get('friends_chrf')}), at {sc.get('sentences_per_s')} sentences/s "
            f"({default.get('sentences_per_s')}).")
    return lines


def known_limits(scores: dict[str, dict], forced_prefix: bool = True) -> list[str]:
    """The card's warnings, read off the measured dev scores (keyed 'context=K');
    `forced_prefix`: the model is fed its previous translations as a decoder prefix."""
    lines = []
    noise = 0.5  # BLEU: differences this small are run-to-run and CPU-to-CPU noise
    best_bleu = max((sc.get("friends_bleu") or 0.0 for sc in scores.values()), default=0.0)
    if scores and best_bleu < 5:
        lines.append("- **Severely undertrained** (dev BLEU below 5): it writes fluent-looking "
                     "Russian that usually does not translate the English. It ships so that the "
                     "app works offline end to end; replace it with a model trained longer "
                     "(e.g. `--preset gpu-base` on a GPU) before relying on it.")
    with_ctx = next((sc for key, sc in scores.items()
                     if key != "context=0" and "random" not in key), None)
    without = scores.get("context=0")
    if with_ctx and without:
        gap = round(without["friends_bleu"] - with_ctx["friends_bleu"], 2)
        if gap > noise:
            lines.append(
                f"- **Context costs accuracy**: friends_dev BLEU {with_ctx['friends_bleu']} with "
                f"context against {without['friends_bleu']} with `--context 0`"
                + (". After a forced previous translation the model tends to end the sentence "
                   "early (it can drop the second turn of a dialogue cue)" if forced_prefix
                   else "") +
                "; use `--context 0` when completeness matters more than agreement with the "
                "previous line.")
        if (with_ctx.get("deixis_dev") or 0.0) < 0.6:
            lines.append(
                f"- **Context barely decides ты/вы or gender yet**: Voita deixis "
                f"{with_ctx.get('deixis_dev')} and lexical cohesion "
                f"{with_ctx.get('lex_cohesion_dev')} with context, against 0.5 / 0.462 for a "
                "model that ignores context; the previous line helps now and then, not reliably.")
        lines += _more_context(scores, with_ctx)
    lines += ["- A small model with a short training budget (see Data and Training above): "
              "translations are often rough (names, idioms and rare words especially); check "
              "them before use.",
              "- Context helps only where the previous cue is within the gap rule and was "
              "translated well; an early mistake can propagate through the prefix."]
    return lines
