"""SentencePiece tokenizer shared by source and target, with the layout's special tokens."""

from __future__ import annotations

import io
from collections.abc import Iterable
from pathlib import Path

import sentencepiece as spm

from subctx.bundle import SpecialTokens


def train_tokenizer(sentences: Iterable[str], out_file: Path, vocab_size: int = 16000,
                    tokens: SpecialTokens | None = None, seed_sentences: int = 2_000_000,
                    ) -> Path:
    """Train a unigram model on both languages; ids: pad 0, unk 1, <s> 2, </s> 3, then the
    user symbols (<sep>, <ctx>). Returns the path of the .model file."""
    tokens = tokens or SpecialTokens()
    out_file = Path(out_file)
    out_file.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(list(sentences)),
        model_writer=buffer,
        vocab_size=vocab_size,
        model_type="unigram",
        character_coverage=0.9999,
        pad_id=0, unk_id=1, bos_id=2, eos_id=3,
        pad_piece=tokens.pad, unk_piece=tokens.unk, bos_piece=tokens.bos, eos_piece=tokens.eos,
        user_defined_symbols=[tokens.sep, tokens.ctx_bos],
        input_sentence_size=seed_sentences,
        shuffle_input_sentence=True,
        hard_vocab_limit=False,
        minloglevel=2,
        num_threads=2,
    )
    out_file.write_bytes(buffer.getvalue())
    return out_file
