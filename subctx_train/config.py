"""The training configuration, declared once: `TrainConfig` (each field with its help), size
presets as TOML files in subctx_train/configs, and `load_config`, which reads a preset or a
file and then applies command-line overrides (`--max-k 1 --weight subtitles=2 --compile`)."""

from __future__ import annotations

import difflib
import math
import tomllib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import Field, asdict, dataclass, field, fields
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any, get_args, get_origin, get_type_hints

from subctx.layout import TARGET_SIDES
from subctx.nn import ARCHITECTURES, architecture
from subctx.nn.config import ModelShape

DEFAULT_PRESET = "cpu-small"

class ConfigError(ValueError):
    """A configuration that cannot be read or is not valid: a one-line message for the user."""


@dataclass
class TrainConfig(ModelShape):
    """Everything a run trains with (its config.json records the resolved values)."""

    architecture: str = field(default="concat", metadata={
        "help": "transformer (sentence-level), concat (Lupo et al. 2022), context_encoder "
                "(Voita et al. 2018) or capsule (Yang et al. 2019)",
        "choices": tuple(ARCHITECTURES), "metavar": "NAME"})
    direction: str = field(default="en-ru", metadata={
        "help": "en-ru, or ru-en: the same documents with the sides swapped (back-translation)",
        "choices": ("en-ru", "ru-en")})
    vocab_size: int = field(default=8000, metadata={
        "help": "SentencePiece's target size (the model's is the trained one)"})
    max_k: int = field(default=3, metadata={
        "help": "most context sentences (given without --k-probs: each K in 0..max_k "
                "equally often)"})
    target_context: str = field(default="prefix", metadata={
        "help": "where the previous translations go: prefix (sKtoK: the decoder's forced "
                "prefix), encoder (after each context source: context does not slow the "
                "decoder) or none (sKto1)",
        "choices": tuple(TARGET_SIDES)})
    k_probs: list[float] = field(default_factory=lambda: [0.3, 0.4, 0.2, 0.1], metadata={
        "help": "how often each context size K = 0..max_k is trained on"})
    cd_weight: float = field(default=0.01, metadata={
        "help": "context-discount weight of target-context tokens in the loss"})
    segment_shift: int = field(default=16, metadata={
        "help": "encoder position shift per context segment (0: none)"})
    max_gap: float = field(default=7.0, metadata={
        "help": "seconds of silence that end the context"})
    own_context: float = field(default=0.0, metadata={
        "help": "chance that target-side context is the model's own translation (documents "
                "with `mt`, see self-translate) instead of the reference"})
    noisy_context: float = field(default=0.0, metadata={
        "help": "chance that target-side context is perturbed (cut short, words dropped), as "
                "an imperfect earlier translation is at inference"})
    control_share: float = field(default=0.0, metadata={
        "help": "chance that a labelled example's source starts with its control tag (ты or "
                "вы, the speaker's gender: subctx_train.labels), each kind drawn apart, so the "
                "model learns to obey the tags and to do without them (0: no tags; needs a "
                "tokenizer made with the tag pieces)"})
    corpus_weights: dict[str, float] = field(default_factory=dict, metadata={
        "help": "copies per epoch of a corpus (doc id prefix, e.g. friends) or a domain (e.g. "
                "news); synthetic=W scales back-translated documents; repeatable",
        "flag": "weight"})
    max_tokens: int = field(default=4096, metadata={"help": "tokens per batch"})
    lr: float = field(default=2.0, metadata={
        "help": "Noam factor: lr = factor * d^-0.5 * min(step^-0.5, step * warmup^-1.5)"})
    warmup: int = field(default=1000, metadata={"help": "warm-up updates"})
    label_smoothing: float = field(default=0.1, metadata={"help": "label smoothing"})
    clip_norm: float = field(default=1.0, metadata={"help": "gradient norm clipping"})
    max_steps: int = field(default=100_000, metadata={
        "help": "stop after this many updates (fine-tuning counts the init run's)"})
    budget_minutes: float = field(default=0.0, metadata={
        "help": "wall-clock limit in minutes (0: none)"})
    eval_every: int = field(default=500, metadata={
        "help": "updates between dev evaluations and checkpoints"})
    patience: int = field(default=8, metadata={
        "help": "evaluations without dev improvement before stopping"})
    keep_last: int = field(default=5, metadata={
        "help": "checkpoints kept (and averaged for the final weights)"})
    seed: int = field(default=1234, metadata={"help": "random seed"})
    precision: str = field(default="auto", metadata={
        "help": "auto (bf16 on CUDA and on CPUs with native bf16 units), bf16 or fp32",
        "choices": ("auto", "bf16", "fp32")})
    adam_impl: str = field(default="auto", metadata={
        "help": "Adam's implementation, the same update up to float rounding: auto (torch's "
                "choice: foreach on CUDA, a loop on CPU), loop, foreach, or fused (one kernel "
                "for all parameters)",
        "choices": ("auto", "loop", "foreach", "fused")})
    log_every: int = field(default=1, metadata={
        "help": "steps between reads of the loss from the device for the progress line (each "
                "read waits for the GPU to catch up; metrics.jsonl is the same whatever it is)"})
    batch_order: str = field(default="size", metadata={
        "help": "how a batch's examples are chosen: size (sorted by the longer side) or "
                "sides (by the longer side, then the source's and the target's lengths: less "
                "padding)",
        "choices": ("size", "sides")})
    compile: bool = field(default=False, metadata={
        "help": "torch.compile the training step, forward and loss (about 1.2x on CPU, after "
                "a start of minutes; shapes dynamic)"})

    def __post_init__(self) -> None:
        """Check the values; apply the architecture's limits (subctx.nn.ARCHITECTURES)."""
        for f in fields(self):
            choices = f.metadata.get("choices")
            if choices and getattr(self, f.name) not in choices:
                raise ConfigError(f"{f.name} is one of {', '.join(choices)}, not "
                                  f"{getattr(self, f.name)!r}")
        for name, accepted in _RANGES.items():
            value = getattr(self, name)
            words = "must be a finite number" if isinstance(value, float) and \
                not math.isfinite(value) else None if accepted.test(value) else accepted.words
            if words:
                raise ConfigError(f"--{name.replace('_', '-')} {_shown(value)}: {words}")
        arch = architecture(self.architecture)
        if arch.max_k is not None:
            self.max_k = arch.max_k
            if len(self.k_probs) != self.max_k + 1:
                self.k_probs = list(arch.k_probs)
        if not arch.segment_shift:
            self.segment_shift = 0
        if not (0 <= self.own_context <= 1 and 0 <= self.noisy_context <= 1):
            raise ConfigError("own_context and noisy_context are probabilities")
        if not 0 <= self.control_share <= 1:
            raise ConfigError("control_share is a probability")
        if self.control_share and self.direction != "en-ru":
            raise ConfigError("control tags label Russian targets: control_share needs en-ru")
        if any(w < 0 for w in self.corpus_weights.values()):
            raise ConfigError("corpus weights cannot be negative")
        if self.max_k < 0:
            raise ConfigError("max_k cannot be negative")
        if self.log_every < 1:
            raise ConfigError("log_every is at least 1")
        if len(self.k_probs) != self.max_k + 1:
            raise ConfigError(f"--k-probs {_shown(self.k_probs)}: k_probs needs one weight for "
                              f"each K in 0..max_k ({self.max_k + 1} for --max-k {self.max_k}), "
                              f"not {len(self.k_probs)}")
        if not all(math.isfinite(p) and p >= 0 for p in self.k_probs) or not sum(self.k_probs):
            raise ConfigError(f"--k-probs {_shown(self.k_probs)}: each weight must be 0 or "
                              f"more, not all 0 (how often each K in 0..max_k is trained on)")
        if self.d_model % 2 or self.d_model % self.n_heads:
            raise ConfigError(f"--d-model {self.d_model}: must be even and a multiple of "
                              f"--n-heads ({self.n_heads}), e.g. "
                              f"{_even_multiple(self.d_model, self.n_heads)}")

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def languages(self) -> tuple[str, str]:
        source, target = self.direction.split("-")
        return source, target

    @classmethod
    def from_dict(cls, data: dict) -> TrainConfig:
        """A recorded config (a run's config.json, a checkpoint's meta.json); one a run began
        before a check of today's refuses is a ConfigError saying so."""
        names = {f.name for f in fields(cls)}
        try:
            return cls(**{k: v for k, v in data.items() if k in names})
        except ConfigError as err:
            raise ConfigError(f"the recorded training config is not valid: {err}") from None


@dataclass(frozen=True)
class _Range:
    """What values a field accepts: a test and its words for the error line."""

    test: Callable[[Any], bool]
    words: str


def _at_least(low: int) -> _Range:
    return _Range(lambda x: x >= low, f"must be at least {low}")


MIN_POSITIONS = 16  # the fewest --max-positions: fewer hold hardly a sentence
_POSITIVE = _Range(lambda x: x > 0, "must be more than 0")
_NOT_NEGATIVE = _Range(lambda x: x >= 0, "must be 0 or more")
_FRACTION = _Range(lambda x: 0 <= x < 1, "must be in [0, 1)")

# The accepted values of the numeric fields (the choices and probabilities are checked above);
# each as `--flag VALUE: words` when a value is out of range.
_RANGES: dict[str, _Range] = {
    "d_model": _at_least(4),
    "n_heads": _at_least(1),
    "ff_dim": _at_least(1),
    "enc_layers": _at_least(1),
    "dec_layers": _at_least(1),
    "dropout": _FRACTION,
    "max_positions": _Range(lambda x: x >= MIN_POSITIONS,
                            f"must be at least {MIN_POSITIONS} (a sentence's positions)"),
    "vocab_size": _at_least(1),
    "cd_weight": _NOT_NEGATIVE,
    "segment_shift": _Range(lambda x: x >= 0, "must be 0 (none) or more"),
    "max_gap": _NOT_NEGATIVE,
    "max_tokens": _at_least(1),
    "lr": _POSITIVE,
    "warmup": _at_least(1),
    "label_smoothing": _FRACTION,
    "clip_norm": _Range(lambda x: x > 0, "must be more than 0 (at 0 clipping would zero "
                                         "every gradient)"),
    "max_steps": _at_least(1),
    "budget_minutes": _Range(lambda x: x >= 0, "must be 0 (no limit) or more"),
    "eval_every": _at_least(1),
    "patience": _Range(lambda x: x >= 1, "must be at least 1 (at 0 the first evaluation "
                                         "stops training)"),
    "keep_last": _at_least(1),
}


def _shown(value: Any) -> str:
    """A value as the command line writes it (a list as X,X,..., 2.0 as 2)."""
    if isinstance(value, list):
        return ",".join(_shown(v) for v in value)
    return f"{value:g}" if isinstance(value, float) else str(value)


def _even_multiple(d_model: int, n_heads: int) -> int:
    """The nearest width above `d_model` that is even and divisible by `n_heads`."""
    step = n_heads if n_heads % 2 == 0 else 2 * n_heads
    return max(step, -(-d_model // step) * step)


# -- describing the fields ---------------------------------------------------------------------
@cache
def _types() -> dict[str, Any]:
    return get_type_hints(TrainConfig)


def field_help(f: Field) -> str:
    return f.metadata["help"]


def flag_name(f: Field) -> str:
    """The command-line name of a field: `max_k` is --max-k, `corpus_weights` --weight."""
    return f.metadata.get("flag") or f.name.replace("_", "-")


def metavar(f: Field) -> str:
    """What a field's value looks like on the command line."""
    hint = _types()[f.name]
    if "metavar" in f.metadata:
        return f.metadata["metavar"]
    if "choices" in f.metadata:
        return "|".join(f.metadata["choices"])
    if get_origin(hint) is dict:
        return "NAME=W"
    if get_origin(hint) is list:
        return "X,X,..."
    return {bool: "", int: "N", float: "X", str: "TEXT"}[hint]


# -- presets and files -------------------------------------------------------------------------
def _configs():
    return files("subctx_train") / "configs"


def preset_names() -> list[str]:
    """The presets in subctx_train/configs."""
    return sorted(p.name.removesuffix(".toml") for p in _configs().iterdir()
                  if p.name.endswith(".toml"))


def _read_toml(source: str | Path) -> dict[str, Any]:
    """The checked values of a preset (a name) or a TOML file (a Path or NAME.toml)."""
    if isinstance(source, Path) or source.endswith(".toml"):
        try:
            text = Path(source).read_text(encoding="utf-8")
        except OSError as err:
            raise ConfigError(f"cannot read {source}: {err.strerror}") from None
    elif source in preset_names():
        text = (_configs() / f"{source}.toml").read_text(encoding="utf-8")
    else:
        raise ConfigError(f"unknown preset {source!r} (choose from {', '.join(preset_names())})")
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{source}: not TOML ({err})") from None
    by_name = {f.name: f for f in fields(TrainConfig)}
    values = {}
    for key, value in raw.items():
        if key not in by_name:
            raise ConfigError(f"{source}: unknown field {key!r} (fields: "
                              f"{', '.join(by_name)})")
        values[key] = _checked(_types()[key], value, f"{source}: {key}")
    return values


def _kind(hint: Any) -> str:
    if get_origin(hint) is list:
        return "numbers separated by commas"
    if get_origin(hint) is dict:
        return "NAME=NUMBER"
    return {bool: "true or false", int: "an integer", float: "a number", str: "text"}[hint]


def _checked(hint: Any, value: Any, where: str) -> Any:
    """A TOML value as the field's type (an integer where a float is due becomes one)."""
    origin = get_origin(hint)
    if origin is list and isinstance(value, list):
        return [_checked(get_args(hint)[0], item, where) for item in value]
    if origin is dict and isinstance(value, dict):
        return {str(k): _checked(get_args(hint)[1], v, where) for k, v in value.items()}
    if hint is float and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if origin is None and type(value) is hint:
        return value
    raise ConfigError(f"{where} = {value!r}: expected {_kind(hint)}")


# -- command-line overrides --------------------------------------------------------------------
_BOOLS = {"true": True, "yes": True, "on": True, "1": True,
          "false": False, "no": False, "off": False, "0": False}


@cache
def _flags() -> dict[str, tuple[Field, bool | None]]:
    """Each flag's field and, for a bool field, the value it means given bare."""
    flags: dict[str, tuple[Field, bool | None]] = {}
    for f in fields(TrainConfig):
        bare = True if _types()[f.name] is bool else None
        flags[flag_name(f)] = (f, bare)
        if bare:
            flags[f"no-{flag_name(f)}"] = (f, False)
    return flags


def _field_of(flag: str) -> tuple[Field, bool | None]:
    try:
        return _flags()[flag]
    except KeyError:
        near = difflib.get_close_matches(flag, _flags(), n=1)
        hint = f"did you mean --{near[0]}? " if near else ""
        raise ConfigError(f"no such option --{flag} ({hint}config fields: "
                          f"{', '.join('--' + flag_name(f) for f in fields(TrainConfig))})"
                          ) from None


def _tokens(args: Sequence[str]) -> Iterator[tuple[Field | None, str, int]]:
    """(field, raw value, tokens taken) for each override in `args`, (None, token, 1) for a
    positional argument."""
    i = 0
    while i < len(args):
        token = args[i]
        if token.startswith("--") and token != "--":
            item = _override(token, args[i + 1] if i + 1 < len(args) else None)
        else:
            item = None, token, 1
        yield item
        i += item[2]


def _override(token: str, after: str | None) -> tuple[Field, str, int]:
    flag, has_value, raw = token[2:].partition("=")
    f, bare = _field_of(flag)
    if has_value:
        if bare is False:
            raise ConfigError(f"--{flag} takes no value")
        return f, raw, 1
    if bare is None:
        if after is None:
            raise ConfigError(f"--{flag} needs a value ({metavar(f)})")
        return f, after, 2
    if bare and after is not None and after.lower() in _BOOLS:  # --compile false
        return f, after, 2
    return f, str(bare), 1


def _coerce(f: Field, raw: str) -> Any:
    """A command-line value as its field's type; a list field takes X,X,..., a dict NAME=W."""
    hint = _types()[f.name]
    try:
        if hint is bool:
            return _BOOLS[raw.lower()]
        if get_origin(hint) is list:
            return [get_args(hint)[0](item) for item in raw.split(",")]
        if get_origin(hint) is dict:
            name, value = raw.split("=")
            if not name.strip():
                raise ValueError(raw)
            return {name.strip(): get_args(hint)[1](value)}
        return hint(raw)
    except (KeyError, ValueError):
        raise ConfigError(f"--{flag_name(f)} {raw}: expected {_kind(hint)}") from None


def split_args(args: Sequence[str]) -> tuple[list[str], list[str]]:
    """The positional arguments among `args`, and the overrides (`--field VALUE`,
    `--field=VALUE`, a bare `--flag` or `--no-flag`), each kept in order."""
    positional: list[str] = []
    overrides: list[str] = []
    i = 0
    for f, _, taken in _tokens(args):
        (overrides if f is not None else positional).extend(args[i:i + taken])
        i += taken
    return positional, overrides


def parse_overrides(overrides: Sequence[str]) -> dict[str, Any]:
    """The values `overrides` give; a repeated list or dict field collects every value."""
    values: dict[str, Any] = {}
    for f, raw, _ in _tokens(overrides):
        if f is None:
            raise ConfigError(f"unexpected argument {raw!r}")
        value = _coerce(f, raw)
        if isinstance(value, list):
            values.setdefault(f.name, []).extend(value)
        elif isinstance(value, dict):
            values.setdefault(f.name, {}).update(value)
        else:
            values[f.name] = value
    return values


# -- the resolved config -----------------------------------------------------------------------
def _derived(values: dict[str, Any]) -> dict[str, Any]:
    """`max_k` given without `k_probs`: every K in 0..max_k equally often."""
    if "max_k" in values and "k_probs" not in values:
        k = values["max_k"]
        values = {**values, "k_probs": [1.0 / (k + 1)] * (k + 1) if k >= 0 else []}
    return values


def _build(values: dict[str, Any]) -> TrainConfig:
    try:
        return TrainConfig(**values)
    except ConfigError:
        raise
    except ValueError as err:
        raise ConfigError(str(err)) from None


def load_config(source: str | Path = DEFAULT_PRESET, overrides: Sequence[str] = ()
                ) -> TrainConfig:
    """A preset (a name) or a TOML file (a Path or NAME.toml), then the command-line
    `overrides` on top (a dict field adds to the file's); ConfigError says what is wrong."""
    values = _derived(_read_toml(source))
    for name, value in _derived(parse_overrides(overrides)).items():
        values[name] = {**values.get(name, {}), **value} if isinstance(value, dict) else value
    return _build(values)


def make_config(preset: str = DEFAULT_PRESET, **values: Any) -> TrainConfig:
    """A preset with some fields replaced by Python values (for tests and scripts)."""
    return _build({**_derived(_read_toml(preset)), **_derived(values)})
