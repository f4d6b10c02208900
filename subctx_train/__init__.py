"""Training side of subctx: data, tokenizer, models, trainer, evaluation, export (needs torch)."""
