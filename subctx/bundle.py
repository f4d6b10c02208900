"""The model bundle (docs/design.md): a directory with a manifest, `subctx.json`.

The app reads the manifest and never guesses: which backend runs the model (subctx.backends),
which SentencePiece models tokenise it, how context is laid out in its input, and what the
context may change by default (subctx.decoding.scope).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from subctx.contract import SpecialTokens
from subctx.decoding.scope import SCOPES
from subctx.errors import BundleError
from subctx.layout import TARGET_SIDES, TargetSide
from subctx.nn import ARCHITECTURES

FORMAT_VERSION = 1
MANIFEST = "subctx.json"


@dataclass(frozen=True)
class ContextSettings:
    """How a model sees context.

    max_k: most preceding segments the model was trained with (0: sentence-level model).
    default_k / max_gap: the app's defaults for the context rule.
    target_side: where the previous translations go (subctx.layout.TARGET_SIDES): 'prefix',
        the decoder's forced prefix; 'encoder', the encoder, each after its source; 'none':
        nowhere (source-side context only).
    segment_shift: encoder positions are position + segment * shift (0: plain positions);
        carried to CTranslate2 as a source feature of position tokens.
    guard: whether the app checks context translations against plain ones by default
        (subctx.guard); chosen on dev at export, since it costs ~1.7x the decoding time.
    scope: what context may change in a translation by default: 'all', or 'agreement' (only
        ты/вы, pronouns and elided verbs; other differences keep the plain translation), for a model
        whose other context changes hurt on dev more than they help (subctx.agreement).
    """

    max_k: int = 0
    default_k: int = 0
    max_gap: float = 7.0
    target_side: str = "prefix"
    segment_shift: int = 0
    guard: bool = True
    scope: str = "all"

    @property
    def side(self) -> TargetSide:
        """Where the previous translations go (checked when the manifest is read)."""
        return TARGET_SIDES[self.target_side]

    @property
    def target_prefix(self) -> bool:
        """Whether previous translations are fed as the decoder's forced prefix."""
        return self.side.prefix


@dataclass(frozen=True)
class Manifest:
    """The parsed `subctx.json`."""

    architecture: str
    backend: str = "ctranslate2"
    format_version: int = FORMAT_VERSION
    source_lang: str = "en"
    target_lang: str = "ru"
    max_positions: int = 1024  # longest encoder/decoder sequence the model has positions for
    # beam search scores hypotheses by log-probability / length ** length_penalty; chosen on
    # dev at export time (a concatenation model fed a long prefix needs more than 1.0)
    length_penalty: float = 1.0
    source_spm: str = "source.spm"
    target_spm: str = "target.spm"
    context: ContextSettings = field(default_factory=ContextSettings)
    special_tokens: SpecialTokens = field(default_factory=SpecialTokens)
    scores: dict[str, Any] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)
    # the kinds of control tag the model was trained with (subctx.controls: 'formality',
    # 'speaker_gender'); none in bundles made before them, whose manifests lack the field
    controls: list[str] = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, indent=2) + "\n"

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Manifest:
        version = data.get("format_version")
        if version != FORMAT_VERSION:
            raise BundleError(
                f"bundle format version {version!r} is not supported (this subctx reads "
                f"version {FORMAT_VERSION}); use a matching subctx or re-export the model")
        try:
            context = ContextSettings(**data.get("context", {}))
            tokens = SpecialTokens(**data.get("special_tokens", {}))
            rest = {k: v for k, v in data.items() if k not in ("context", "special_tokens")}
            manifest = cls(context=context, special_tokens=tokens, **rest)
        except TypeError as err:
            raise BundleError(f"malformed {MANIFEST}: {err}") from None
        if manifest.architecture not in ARCHITECTURES:
            raise BundleError(f"unknown architecture '{manifest.architecture}' in {MANIFEST} "
                              f"(this subctx knows {', '.join(ARCHITECTURES)})")
        if manifest.context.target_side not in TARGET_SIDES:
            raise BundleError(f"unknown context.target_side '{manifest.context.target_side}' "
                              f"(use {', '.join(TARGET_SIDES)})")
        if not (isinstance(manifest.controls, list)
                and all(isinstance(c, str) for c in manifest.controls)):
            raise BundleError(f"malformed {MANIFEST}: controls is a list of names")
        if manifest.context.scope not in SCOPES:
            raise BundleError(f"unknown context.scope '{manifest.context.scope}' (use "
                              f"{', '.join(SCOPES)})")
        return manifest


@dataclass(frozen=True)
class Bundle:
    path: Path
    manifest: Manifest

    def file(self, name: str) -> Path:
        return self.path / name


def load_bundle(path: str | Path) -> Bundle:
    """Read and check a bundle directory; raise BundleError with a one-line reason."""
    path = Path(path)
    if not path.exists():
        raise BundleError(f"model folder not found: {path}")
    if not path.is_dir():
        raise BundleError(f"{path} is not a model bundle (not a folder)")
    manifest_path = path / MANIFEST
    if not manifest_path.is_file():
        raise BundleError(f"{path} is not a subctx model bundle (no {MANIFEST})")
    try:
        data = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise BundleError(f"{manifest_path}: unreadable manifest ({err})") from None
    if not isinstance(data, dict):
        raise BundleError(f"{manifest_path}: manifest is not a JSON object")
    manifest = Manifest.from_dict(data)
    required = list(dict.fromkeys([manifest.source_spm, manifest.target_spm]))
    missing = [name for name in required if not (path / name).is_file()]
    if missing:
        raise BundleError(f"{path}: incomplete bundle, missing {', '.join(missing)}")
    return Bundle(path, manifest)


def default_bundle_path() -> Path:
    """The embedded default model: $SUBCTX_MODEL, else assets/models/en-ru in the checkout."""
    override = os.environ.get("SUBCTX_MODEL")
    if override:
        return Path(override)
    return Path(__file__).resolve().parent.parent / "assets" / "models" / "en-ru"


def write_manifest(path: str | Path, manifest: Manifest) -> None:
    Path(path, MANIFEST).write_text(manifest.to_json(), encoding="utf-8")
