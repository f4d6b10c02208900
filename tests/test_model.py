"""The Transformer's incremental decoding (KV cache) against the full decoder."""

import torch

from training.context_models import ContextEncoderTransformer
from training.model import ModelConfig, Transformer

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
