"""SentencePiece tokenizer shared by source and target, with the layout's special tokens.

Byte fallback is on, so any character outside the vocabulary becomes its UTF-8 bytes instead of
`<unk>`: no input is lost and no output ever holds the unknown-token mark. The characters
subtitles use are required pieces, so they stay one piece each instead of three bytes.
"""

from __future__ import annotations

import io
import random
import struct
import time
from collections.abc import Iterable
from contextlib import contextmanager
from pathlib import Path

import sentencepiece as spm

from subctx.bundle import SpecialTokens
from subctx_train.data import DataError

PAD, UNK, BOS, EOS = 0, 1, 2, 3  # fixed by train_tokenizer; servers read them from the model

# typography, music notes and accented Latin that subtitles carry, digits and both alphabets
SUBTITLE_CHARS = (
    "♪♫«»„“”‘’‚—–…•·°№€$£%&@#*+=/\\|~^_<>[](){}"
    "0123456789"
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!?.,;:'\"-"
    "АБВГДЕЁЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯабвгдеёжзийклмнопрстуфхцчшщъыьэюя"
    "àáâãäåæçèéêëìíîïñòóôõöøùúûüýÿœßÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÑÒÓÔÕÖØÙÚÛÜÝŒ"
)


class TokenizerError(DataError):
    """A tokenizer subctx cannot train or use (one line, no traceback)."""


def check_tokenizer(model: bytes, name: str | Path) -> spm.SentencePieceProcessor:
    """The SentencePiece model serialised in `model` (the bytes of file `name`), if subctx can
    train with it: pad, unk, <s>, </s> at ids 0-3 and the layout's pieces (<sep>, <ctx>), as
    `subctx-train tokenizer` makes them; else TokenizerError."""
    from subctx.contract import SpecialIds

    try:
        sp = spm.SentencePieceProcessor(model_proto=model) if model else None
    except RuntimeError:
        sp = None
    if sp is None or sp.get_piece_size() == 0:
        raise TokenizerError(f"{name}: not a SentencePiece model (make one with `subctx-train "
                             "tokenizer`)")
    ids = (sp.pad_id(), sp.unk_id(), sp.bos_id(), sp.eos_id())
    try:
        if ids != (PAD, UNK, BOS, EOS):
            raise ValueError(f"pad, unk, <s>, </s> have ids {ids}, not {(PAD, UNK, BOS, EOS)}")
        SpecialIds.of(sp)
    except ValueError as err:
        raise TokenizerError(f"{name}: a SentencePiece model not made by subctx ({err}); make "
                             "one with `subctx-train tokenizer`") from None
    return sp


def control_symbols(tokens: SpecialTokens) -> list[str]:
    """The control tags' pieces (subctx.controls): <inf> <frm> <masc> <fem>."""
    return [tokens.informal_tag, tokens.formal_tag, tokens.masculine_tag, tokens.feminine_tag]


def user_symbols(tokens: SpecialTokens, control_tags: bool = True) -> list[str]:
    """Pieces that are never split: layout separators, the back-translation tag and (tokenizers
    made since control tags) the control tags, in that order, so ids 4-6 stay <sep> <ctx> <bt>
    and the tags come after them (7-10)."""
    return [tokens.sep, tokens.ctx_bos, tokens.bt_tag,
            *(control_symbols(tokens) if control_tags else [])]


def min_vocab_size(tokens: SpecialTokens, control_tags: bool = True) -> int:
    """The smallest vocabulary that holds the bytes, the special pieces and the subtitle
    characters with room for some merged pieces (tiny test models get this many)."""
    return 256 + 4 + len(user_symbols(tokens, control_tags)) + len(set(SUBTITLE_CHARS)) + 64


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _user_piece(piece: str) -> bytes:
    """One `pieces` entry of a serialised sentencepiece ModelProto: field 1 holding a
    SentencePiece message (piece = 1, score = 2, type = 3 USER_DEFINED = 4)."""
    text = piece.encode("utf-8")
    body = b"\x0a" + _varint(len(text)) + text + b"\x15" + struct.pack("<f", 0.0) + b"\x18\x04"
    return b"\x0a" + _varint(len(body)) + body


def add_user_pieces(model: bytes, pieces: Iterable[str]) -> bytes:
    """A tokenizer with `pieces` as never-split user symbols after its own (ids size, size + 1,
    ...), every other piece and id unchanged, so that a trained model can learn them (e.g. the
    control tags, for a bundle made before them). A repeated protobuf field may continue
    anywhere in a message, so the entries are appended to the serialised model as it is; pieces
    it already has are left out."""
    processor = spm.SentencePieceProcessor(model_proto=model)
    new = [p for p in dict.fromkeys(pieces) if processor.piece_to_id(p) == processor.unk_id()]
    return model + b"".join(_user_piece(p) for p in new)


@contextmanager
def _doing(what: str):
    """Say what a long step is doing: a spinner on a terminal (yielded, to update), else a line
    (a log file; None is yielded); then how long it took."""
    from rich.console import Console

    console = Console(stderr=True)
    start = time.monotonic()
    if console.is_terminal:
        with console.status(what + "…") as status:
            yield status
    else:
        console.print(what + "…", markup=False, highlight=False, soft_wrap=True)
        yield None
    console.print(f"{what}: done in {time.monotonic() - start:.0f} s", markup=False,
                  highlight=False, soft_wrap=True)


def train_tokenizer(sentences: Iterable[str], out_file: Path, vocab_size: int = 16000,
                    tokens: SpecialTokens | None = None, seed_sentences: int = 2_000_000,
                    control_tags: bool = True) -> Path:
    """Train a unigram model on both languages; ids: pad 0, unk 1, <s> 2, </s> 3, then the
    user symbols (<sep>, <ctx>, <bt>, and the control tags <inf> <frm> <masc> <fem> unless
    `control_tags` is False: a tokenizer as made before them). Returns the .model file.
    A vocabulary under min_vocab_size gets that many pieces, and data that cannot make as
    many pieces as asked gets what it makes: either is said on stderr; a size < 1 or no
    sentence is a TokenizerError."""
    tokens = tokens or SpecialTokens()
    fewest = min_vocab_size(tokens, control_tags)
    if vocab_size < 1:
        raise TokenizerError(f"vocabulary size {vocab_size}: give at least {fewest} (the "
                             "bytes, the special pieces and the subtitle characters)")
    sentences = list(sentences)
    if not any(sentences):
        raise TokenizerError(f"{out_file}: no sentence to train the tokenizer on")
    # 256 byte pieces, the special and required pieces, and some room for merged pieces
    asked, vocab_size = vocab_size, max(vocab_size, fewest)
    out_file = Path(out_file)
    out_file.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    with _doing(f"training SentencePiece (unigram, {vocab_size:,} pieces) on "
                f"{len(sentences):,} sentences"):
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(sentences),
            model_writer=buffer,
            vocab_size=vocab_size,
            model_type="unigram",
            character_coverage=0.9995,
            byte_fallback=True,
            normalization_rule_name="identity",  # NFKC would turn … into ... and ½ into 1⁄2
            required_chars=SUBTITLE_CHARS,
            pad_id=PAD, unk_id=UNK, bos_id=BOS, eos_id=EOS,
            pad_piece=tokens.pad, unk_piece=tokens.unk, bos_piece=tokens.bos,
            eos_piece=tokens.eos,
            user_defined_symbols=user_symbols(tokens, control_tags),
            input_sentence_size=seed_sentences,
            shuffle_input_sentence=True,
            hard_vocab_limit=False,
            minloglevel=2,
            num_threads=2,
        )
    model = buffer.getvalue()
    made = spm.SentencePieceProcessor(model_proto=model).get_piece_size()
    if made != asked:
        why = [f"{fewest:,} at least hold the bytes, the special pieces and the subtitle "
               "characters"] if asked < fewest else []
        if made < vocab_size:
            why.append("these sentences make no more")
        from rich.console import Console

        Console(stderr=True).print(
            f"note: the tokenizer has {made:,} pieces, not the {asked:,} asked "
            f"({'; '.join(why) or 'as SentencePiece made it'})",
            markup=False, highlight=False, soft_wrap=True)
    out_file.write_bytes(model)
    return out_file


def tokenizer_sentences(docs: Iterable, mono_docs: Iterable = (), limit: int = 600_000,
                        seed: int = 1234) -> list[str]:
    """A shuffled sample of both sides of parallel documents (and of the Russian side of
    monolingual ones) to train the tokenizer on; parallel text is taken whole first."""
    parallel, mono = [], []
    for doc in docs:
        for seg in doc.segments:
            parallel += [t for t in (seg.src, seg.tgt) if t]
    for doc in mono_docs:
        mono += [seg.tgt for seg in doc.segments if seg.tgt]
    rng = random.Random(seed)
    rng.shuffle(parallel)
    rng.shuffle(mono)
    sample = parallel[:limit] + mono[: max(0, min(len(mono), limit - len(parallel),
                                                  len(parallel) // 2))]
    rng.shuffle(sample)
    return sample


def build_tokenizer(data: Iterable[str | Path], out_file: Path, mono: Iterable[str | Path] = (),
                    vocab_size: int = 8000, limit: int = 600_000) -> tuple[int, int]:
    """`subctx-train tokenizer`, saying what each step does: read the parallel documents
    (filtered as the trainer filters them) and the monolingual ones, sample `limit` sentences,
    train. A size under min_vocab_size is refused before anything is read (TokenizerError).
    Returns (sentences trained on, pieces made)."""
    from subctx_train.data import filter_documents, read_documents

    fewest = min_vocab_size(SpecialTokens())
    if vocab_size < fewest:
        raise TokenizerError(f"--vocab-size {vocab_size}: give at least {fewest} (the bytes, "
                             "the special pieces and the subtitle characters)")
    parallel, monolingual = list(map(Path, data)), list(map(Path, mono))
    docs: list = []
    docs_mono: list = []
    with _doing(f"reading {len(parallel) + len(monolingual)} data paths") as status:
        for paths, into in ((parallel, docs), (monolingual, docs_mono)):
            for path in paths:
                if status is not None:
                    status.update(f"reading {path} ({len(docs) + len(docs_mono):,} documents "
                                  "so far)…")
                into += read_documents([path])
    docs, _ = filter_documents(docs)
    sample = tokenizer_sentences(docs, docs_mono, limit)
    train_tokenizer(sample, out_file, vocab_size=vocab_size)
    made = spm.SentencePieceProcessor(model_file=str(out_file)).get_piece_size()
    return len(sample), made
