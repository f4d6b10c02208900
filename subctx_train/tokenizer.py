"""SentencePiece tokenizer shared by source and target, with the layout's special tokens.

Byte fallback is on, so any character outside the vocabulary becomes its UTF-8 bytes instead of
`<unk>`: no input is lost and no output ever holds the unknown-token mark. The characters
subtitles use are required pieces, so they stay one piece each instead of three bytes.
"""

from __future__ import annotations

import io
import random
import struct
from collections.abc import Iterable
from pathlib import Path

import sentencepiece as spm

from subctx.bundle import SpecialTokens

PAD, UNK, BOS, EOS = 0, 1, 2, 3  # fixed by train_tokenizer; servers read them from the model

# typography, music notes and accented Latin that subtitles carry, digits and both alphabets
SUBTITLE_CHARS = (
    "♪♫«»„“”‘’‚—–…•·°№€$£%&@#*+=/\\|~^_<>[](){}"
    "0123456789"
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!?.,;:'\"-"
    "АБВГДЕЁЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯабвгдеёжзийклмнопрстуфхцчшщъыьэюя"
    "àáâãäåæçèéêëìíîïñòóôõöøùúûüýÿœßÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÑÒÓÔÕÖØÙÚÛÜÝŒ"
)


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


def train_tokenizer(sentences: Iterable[str], out_file: Path, vocab_size: int = 16000,
                    tokens: SpecialTokens | None = None, seed_sentences: int = 2_000_000,
                    control_tags: bool = True) -> Path:
    """Train a unigram model on both languages; ids: pad 0, unk 1, <s> 2, </s> 3, then the
    user symbols (<sep>, <ctx>, <bt>, and the control tags <inf> <frm> <masc> <fem> unless
    `control_tags` is False: a tokenizer as made before them). Returns the .model file."""
    tokens = tokens or SpecialTokens()
    # 256 byte pieces, the special and required pieces, and some room for merged pieces
    vocab_size = max(vocab_size, min_vocab_size(tokens, control_tags))
    out_file = Path(out_file)
    out_file.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(list(sentences)),
        model_writer=buffer,
        vocab_size=vocab_size,
        model_type="unigram",
        character_coverage=0.9995,
        byte_fallback=True,
        normalization_rule_name="identity",  # NFKC would turn … into ... and ½ into 1⁄2
        required_chars=SUBTITLE_CHARS,
        pad_id=PAD, unk_id=UNK, bos_id=BOS, eos_id=EOS,
        pad_piece=tokens.pad, unk_piece=tokens.unk, bos_piece=tokens.bos, eos_piece=tokens.eos,
        user_defined_symbols=user_symbols(tokens, control_tags),
        input_sentence_size=seed_sentences,
        shuffle_input_sentence=True,
        hard_vocab_limit=False,
        minloglevel=2,
        num_threads=2,
    )
    out_file.write_bytes(buffer.getvalue())
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
