"""The Transformer's incremental decoding (KV cache) against the full decoder."""

import torch

from subctx.nn.config import ModelConfig
from subctx.nn.context_encoder import ContextEncoderTransformer
from subctx.nn.transformer import Dropout, Transformer

CFG = ModelConfig(vocab_size=40, d_model=32, n_heads=4, ff_dim=64, enc_layers=2, dec_layers=2,
                  dropout=0.0)


def _check_steps_match_full_decoder(model, memory, mask, steps=6):
    gen = torch.Generator().manual_seed(0)
    tokens = torch.full((memory.size(0), 1), 2, dtype=torch.long)
    cache = model.start_decoding(memory, mask)
    for _ in range(steps):
        full = model.decode(tokens, memory, mask)[0][:, -1]
        step = model.decode_step(tokens[:, -1], cache)
        torch.testing.assert_close(step, full, atol=1e-5, rtol=1e-5)
        nxt = torch.randint(4, CFG.vocab_size, (memory.size(0), 1), generator=gen)
        tokens = torch.cat([tokens, nxt], 1)


def test_decode_step_equals_full_decoder_with_padded_sources():
    torch.manual_seed(0)
    model = Transformer(CFG).eval()
    src = torch.tensor([[5, 6, 7, 8, 3], [9, 10, 3, 0, 0]])
    with torch.no_grad():
        memory, mask = model.encode(src)
        _check_steps_match_full_decoder(model, memory, mask)


def test_decode_step_for_a_context_model_and_reordered_hypotheses():
    torch.manual_seed(1)
    model = ContextEncoderTransformer(CFG).eval()
    src = torch.tensor([[5, 6, 7, 3], [9, 10, 3, 0]])
    ctx = torch.tensor([[1, 11, 12, 3], [1, 0, 0, 0]])
    with torch.no_grad():
        memory, mask = model.encode(src, None, ctx)
        tokens = torch.tensor([[2, 14, 15], [2, 16, 17]])
        cache = model.start_decoding(memory, mask)
        for t in range(tokens.size(1)):
            model.decode_step(tokens[:, t], cache)
        swap = torch.tensor([1, 0])  # beam search keeps the other row's hypothesis
        cache.reorder(swap)
        nxt = torch.tensor([20, 21])
        step = model.decode_step(nxt, cache)
        full = model.decode(torch.cat([tokens[swap], nxt[:, None]], 1), memory[swap],
                            mask[swap])[0][:, -1]
        torch.testing.assert_close(step, full, atol=1e-5, rtol=1e-5)


def test_dropout_drops_about_p_and_keeps_the_expected_value():
    torch.manual_seed(0)
    drop = Dropout(0.1)
    x = torch.ones(200, 500)
    y = drop(x)
    dropped = float((y == 0).float().mean())
    assert abs(dropped - 26 / 256) < 0.005  # p rounded to 1/256
    assert abs(float(y.mean()) - 1.0) < 0.01  # inverted dropout: same expectation
    assert torch.equal(drop.eval()(x), x)


def test_dropout_passes_gradients_only_through_kept_elements():
    torch.manual_seed(0)
    x = torch.randn(64, 32, requires_grad=True)
    y = Dropout(0.5)(x)
    y.sum().backward()
    kept = y.detach() != 0
    assert torch.allclose(x.grad[kept], torch.full_like(x.grad[kept], 256 / 128))
    assert torch.all(x.grad[~kept] == 0)
