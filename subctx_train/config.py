"""Training configurations: one dataclass, two presets (a small CPU one and a GPU base one)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

from subctx.nn import architecture
from subctx.nn.config import ModelShape


@dataclass
class TrainConfig(ModelShape):
    # architecture: 'transformer' (sentence-level), 'concat' (Lupo et al. 2022),
    # 'context_encoder' (Voita et al. 2018) or 'capsule' (Yang et al. 2019)
    architecture: str = "concat"
    direction: str = "en-ru"  # 'ru-en' trains on the same documents with the sides swapped
    vocab_size: int = 8000  # SentencePiece's target size (the model's is the trained one)
    # context (concat only)
    max_k: int = 3
    target_context: str = "prefix"  # 'prefix': sKtoK (context on both sides); 'none': sKto1
    k_probs: list[float] = field(default_factory=lambda: [0.3, 0.4, 0.2, 0.1])
    cd_weight: float = 0.01
    segment_shift: int = 16
    max_gap: float = 7.0
    # target-side context as inference shows it (concat): the chance of the model's own
    # translation (documents with `mt`, see `subctx-train self-translate`) instead of the
    # reference, and of a perturbed (cut short, words dropped) context translation
    own_context: float = 0.0
    noisy_context: float = 0.0
    # data: expected copies per epoch of a corpus (doc id prefix) or domain; 'synthetic'
    # scales back-translated documents (see subctx_train.data.weight_of)
    corpus_weights: dict[str, float] = field(default_factory=dict)
    # optimisation
    max_tokens: int = 4096
    lr: float = 2.0  # Noam factor: lr = factor * d^-0.5 * min(step^-0.5, step * warmup^-1.5)
    warmup: int = 1000
    label_smoothing: float = 0.1
    clip_norm: float = 1.0
    max_steps: int = 100_000
    budget_minutes: float = 0.0  # 0: no wall-clock limit
    eval_every: int = 500
    patience: int = 8  # evaluations without dev improvement before stopping
    keep_last: int = 5  # checkpoints kept (and averaged at export)
    seed: int = 1234
    # 'auto': bf16 autocast on CUDA and on CPUs with native bf16 matrix units (AMX,
    # AVX512-BF16), float32 elsewhere; 'bf16' or 'fp32' to force one
    precision: str = "auto"
    compile: bool = False  # torch.compile the training step (about 1.2x on CPU, after ~2 min)

    def validate(self) -> None:
        arch = architecture(self.architecture)  # its limits (subctx.nn.ARCHITECTURES)
        if arch.max_k is not None:
            self.max_k = arch.max_k
            if len(self.k_probs) != self.max_k + 1:
                self.k_probs = list(arch.k_probs)
        if not arch.segment_shift:
            self.segment_shift = 0
        if self.direction not in ("en-ru", "ru-en"):
            raise ValueError("direction is 'en-ru' or 'ru-en'")
        if not (0 <= self.own_context <= 1 and 0 <= self.noisy_context <= 1):
            raise ValueError("own_context and noisy_context are probabilities")
        if any(w < 0 for w in self.corpus_weights.values()):
            raise ValueError("corpus weights cannot be negative")
        if self.precision not in ("auto", "bf16", "fp32"):
            raise ValueError("precision is 'auto', 'bf16' or 'fp32'")
        if self.target_context not in ("prefix", "none"):
            raise ValueError("target_context is 'prefix' (sKtoK) or 'none' (sKto1)")
        if len(self.k_probs) != self.max_k + 1:
            raise ValueError("k_probs needs one weight for each K in 0..max_k")

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def languages(self) -> tuple[str, str]:
        source, target = self.direction.split("-")
        return source, target

    @classmethod
    def from_dict(cls, data: dict) -> TrainConfig:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


PRESETS: dict[str, dict] = {
    # about 8M parameters: trains on 2 CPU cores in an hour or two
    "cpu-small": dict(d_model=256, n_heads=4, ff_dim=1024, enc_layers=3, dec_layers=3,
                      dropout=0.1, vocab_size=8000, max_tokens=3000, warmup=400, lr=1.0,
                      eval_every=300),
    # 8.9M parameters, a deep encoder and a shallow decoder (Kasai et al. 2021): decodes
    # faster than cpu-small, with context most of all (docs/pareto)
    "cpu-deep": dict(d_model=256, n_heads=4, ff_dim=1024, enc_layers=6, dec_layers=2,
                     dropout=0.1, vocab_size=8000, max_tokens=3000, warmup=400, lr=1.0,
                     eval_every=300),
    # 21M parameters with a 16k vocabulary (42 MB in bf16: a GPU run sends it back whole);
    # decodes with context faster on 2 CPU cores than cpu-small (docs/pareto)
    "gpu-deep": dict(d_model=384, n_heads=6, ff_dim=1536, enc_layers=6, dec_layers=2,
                     dropout=0.2, vocab_size=16000, max_tokens=12000, warmup=2000,
                     eval_every=500),
    # about 50M parameters: the Transformer-base of Vaswani et al. with low-resource dropout
    "gpu-base": dict(d_model=512, n_heads=8, ff_dim=2048, enc_layers=6, dec_layers=6,
                     dropout=0.3, vocab_size=16000, max_tokens=16000, warmup=2000,
                     eval_every=500),
    # a few seconds: for tests
    "tiny": dict(d_model=32, n_heads=2, ff_dim=64, enc_layers=2, dec_layers=1, dropout=0.0,
                 vocab_size=200, max_tokens=400, warmup=10, eval_every=5, max_positions=256),
}


def make_config(preset: str = "cpu-small", **overrides) -> TrainConfig:
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r} (choose from {', '.join(PRESETS)})")
    cfg = TrainConfig(**{**PRESETS[preset], **{k: v for k, v in overrides.items()
                                               if v is not None}})
    cfg.validate()
    return cfg
