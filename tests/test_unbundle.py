"""A CTranslate2 bundle read back into PyTorch weights (subctx_train.ct2_import): the inverse of
the export, so that a shipped model can be trained further."""

import json

import pytest
import sentencepiece as spm
import torch
from typer.testing import CliRunner

from subctx.bundle import ContextSettings, Manifest
from subctx.nn.config import ModelConfig
from subctx.nn.transformer import Transformer
from subctx_train.checkpoint import load_final
from subctx_train.ct2_import import unbundle
from subctx_train.train import initial_weights
from tests.helpers import build_tiny_bundle


def _exported(tmp_path, shift: int, quantization: str | None):
    from subctx_train.export import export_bundle

    tiny = build_tiny_bundle(tmp_path / "tiny")
    spm_file = tiny.parent / "spm.model"
    torch.manual_seed(3)
    vocab = spm.SentencePieceProcessor(model_file=str(spm_file)).get_piece_size()
    model = Transformer(ModelConfig(vocab_size=vocab, d_model=32, n_heads=4, ff_dim=64,
                                    enc_layers=3, dec_layers=1, max_positions=128,
                                    dropout=0.0)).eval()
    manifest = Manifest("concat", source_spm="spm.model", target_spm="spm.model",
                        max_positions=128, context=ContextSettings(segment_shift=shift),
                        info={"training": {"steps": 1234, "config": {"dropout": 0.2}}})
    bundle = export_bundle(model, spm_file, manifest, tmp_path / "bundle",
                           quantization=quantization)
    return model, bundle


@pytest.mark.parametrize("shift", [0, 16])
def test_float_bundle_gives_back_the_exact_weights(tmp_path, shift):
    model, bundle = _exported(tmp_path, shift, None)
    run = unbundle(bundle, tmp_path / "run")
    state = load_final(run)
    expected = model.state_dict()
    assert set(state) == set(expected)
    for name, tensor in expected.items():
        assert torch.equal(state[name], tensor), name
    weights, step = initial_weights(run)  # what `train --init-from` starts from
    assert step == 1234 and torch.equal(weights["embed.weight"], expected["embed.weight"])
    rebuilt = Transformer(ModelConfig(vocab_size=expected["embed.weight"].shape[0], d_model=32,
                                      n_heads=4, ff_dim=64, enc_layers=3, dec_layers=1,
                                      max_positions=128, dropout=0.2))
    rebuilt.load_state_dict(state)  # every tensor, every shape


def test_int8_bundle_gives_the_dequantised_weights(tmp_path):
    model, bundle = _exported(tmp_path, 0, "int8")
    state = load_final(unbundle(bundle, tmp_path / "run"))
    for name, tensor in model.state_dict().items():
        if tensor.dim() == 2:  # per-row int8: within half a step of each row's scale
            step = tensor.abs().amax(dim=1, keepdim=True) / 127
            assert ((state[name] - tensor).abs() <= step / 2 + 1e-6).all(), name
            assert not torch.equal(state[name], tensor)
        else:
            assert torch.allclose(state[name], tensor), name


def test_unbundle_cli_and_its_one_line_error(tmp_path):
    from subctx_train.cli import app

    _, bundle = _exported(tmp_path, 0, None)
    runner = CliRunner()
    result = runner.invoke(app, ["unbundle", str(bundle), "--out", str(tmp_path / "run")])
    assert result.exit_code == 0 and (tmp_path / "run" / "spm.model").exists()
    (bundle / "model.bin").write_bytes((bundle / "model.bin").read_bytes()[:100])
    result = runner.invoke(app, ["unbundle", str(bundle), "--out", str(tmp_path / "run2")])
    assert result.exit_code != 0 and "model.bin ends early" in str(result.exception)


def test_control_tags_are_added_after_a_bundles_own_pieces(tmp_path):
    """A bundle made before control tags becomes a run whose tokenizer has them as new ids at
    the end (every old id and every plain text's pieces unchanged) and whose embedding has one
    fresh row each: what a fine-tune with control_share needs (labels.tag_ids accepts it)."""
    from subctx.bundle import SpecialTokens
    from subctx_train.export import export_bundle
    from subctx_train.labels import tag_ids
    from subctx_train.tokenizer import add_user_pieces, control_symbols, train_tokenizer
    from tests.helpers import CORPUS

    spm_file = train_tokenizer([s for pair in CORPUS for s in pair] * 20,
                               tmp_path / "old" / "spm.model", vocab_size=120,
                               control_tags=False)
    old = spm.SentencePieceProcessor(model_file=str(spm_file))
    with pytest.raises(ValueError, match="made before them"):
        tag_ids(old)
    torch.manual_seed(5)
    model = Transformer(ModelConfig(vocab_size=old.get_piece_size(), d_model=32, n_heads=4,
                                    ff_dim=64, enc_layers=2, dec_layers=1, max_positions=128,
                                    dropout=0.0)).eval()
    manifest = Manifest("concat", source_spm="spm.model", target_spm="spm.model",
                        max_positions=128, info={"training": {"steps": 77}})
    bundle = export_bundle(model, spm_file, manifest, tmp_path / "bundle")

    run = unbundle(bundle, tmp_path / "run", control_tags=True)
    new = spm.SentencePieceProcessor(model_file=str(run / "spm.model"))
    size = old.get_piece_size()
    tags = control_symbols(SpecialTokens())
    assert new.get_piece_size() == size + len(tags)
    assert [new.piece_to_id(t) for t in tags] == list(range(size, size + len(tags)))
    assert [new.id_to_piece(i) for i in range(size)] == [old.id_to_piece(i) for i in range(size)]
    text = "Hello there, how are you? Привет, как дела?"
    assert new.encode(text) == old.encode(text)
    assert size + 1 in new.encode("<frm>Thank you.")  # one piece, never split
    assert add_user_pieces((run / "spm.model").read_bytes(), tags) == \
        (run / "spm.model").read_bytes()  # pieces it has are not added twice
    assert set(tag_ids(new).values()) == set(range(size, size + len(tags)))

    state = load_final(run)
    expected = model.state_dict()
    assert state["embed.weight"].shape == (size + len(tags), 32)
    assert torch.equal(state["embed.weight"][:size], expected["embed.weight"])
    assert state["embed.weight"][size:].abs().sum() > 0  # fresh rows, not zeros
    assert all(torch.equal(state[k], v) for k, v in expected.items() if k != "embed.weight")
    assert json.loads((run / "config.json").read_text())["model"]["vocab_size"] == size + 4
    weights, step = initial_weights(run)
    assert step == 77
    grown = Transformer(ModelConfig(vocab_size=size + len(tags), d_model=32, n_heads=4,
                                    ff_dim=64, enc_layers=2, dec_layers=1, max_positions=128))
    grown.load_state_dict(weights)  # every tensor fits the grown model

    again = unbundle(bundle, tmp_path / "plain")  # without the option: the bundle's own
    assert (again / "spm.model").read_bytes() == spm_file.read_bytes()
