"""The trainer's answers to runs the trial found wrong: a run that trained nothing says so,
`keep_last 0` finalizes, final weights are written atomically, `--init-from` a model of another
shape and resuming a run as another model are refused in one line, and a resume with other
settings says which (tiny CPU runs, seconds each)."""

import json
import shutil

import pytest
import torch
from safetensors.torch import load_file

from subctx_train.checkpoint import NothingTrained, RunError
from subctx_train.config import make_config
from subctx_train.train import Trainer
from tests.test_training import fixture_docs


def _run(tmp_path, name, init_from=None, spm_model=None, unchecked=None, **overrides):
    """A tiny run; `unchecked`: fields set past the config's validation (the trainer's own
    answer to values the CLI refuses, for a program that builds its config itself)."""
    cfg = make_config("tiny", **{"max_steps": 4, "eval_every": 2, **overrides})
    for key, value in (unchecked or {}).items():
        setattr(cfg, key, value)
    return Trainer(cfg, tmp_path / name, fixture_docs(2), fixture_docs(1), device="cpu",
                   quiet=True, init_from=init_from, spm_model=spm_model)


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """A finished tiny sentence-level run at step 4 (checkpoints at 2 and 4)."""
    root = tmp_path_factory.mktemp("base")
    _run(root, "base", architecture="transformer").train()
    return root / "base"


def test_a_run_that_trains_nothing_says_so_and_names_no_final_weights(tmp_path, base):
    for name, steps in (("zero", 0), ("behind", 3)):
        trainer = _run(tmp_path, name, init_from=base if name == "behind" else None,
                       unchecked={"max_steps": steps})
        with pytest.raises(NothingTrained, match="nothing trained, no final weights"):
            trainer.train()
        assert not (tmp_path / name / "final.safetensors").exists()
        assert not (tmp_path / name / "final.json").exists()
        with pytest.raises(NothingTrained):  # `subctx-train finalize` on such a run too
            trainer.finalize()
    assert issubclass(NothingTrained, RunError)  # one line from the CLI's main()


def test_keep_last_0_finalizes_with_the_last_checkpoint(tmp_path, capsys):
    trainer = _run(tmp_path, "keep0", unchecked={"keep_last": 0})
    trainer.train()
    final = json.loads((tmp_path / "keep0" / "final.json").read_text())
    assert final["averaged_checkpoints"] == ["step-0000004"]
    assert "keep_last 0: the final weights are the last checkpoint's" in capsys.readouterr().err


def test_final_weights_are_written_atomically(tmp_path, base, monkeypatch):
    import safetensors.torch

    run = tmp_path / "run"
    shutil.copytree(base, run)
    before = {n: (run / n).read_bytes() for n in ("final.safetensors", "final.json")}

    def half_written(state, path):
        with open(path, "wb") as handle:
            handle.write(b"\0" * 10)
        raise OSError("disk full")

    monkeypatch.setattr(safetensors.torch, "save_file", half_written)
    trainer = Trainer(make_config("tiny", max_steps=4), run, [], fixture_docs(1),
                      device="cpu", quiet=True)
    with pytest.raises(OSError, match="disk full"):
        trainer.finalize()
    assert {n: (run / n).read_bytes() for n in before} == before
    assert sorted(p.name for p in run.iterdir() if p.name.startswith(".")) == []
    monkeypatch.undo()
    trainer.finalize()
    assert load_file(str(run / "final.safetensors"))
    assert sorted(p.name for p in run.iterdir() if p.name.startswith(".")) == []


def test_init_from_a_model_of_another_shape_is_refused(tmp_path, base):
    with pytest.raises(RunError, match=r"a model of another shape \(d_model 32 → 64\)"):
        _run(tmp_path, "wider", init_from=base, d_model=64, max_steps=8)
    with pytest.raises(RunError, match=r"ff_dim 64 → 128"):
        _run(tmp_path, "ffn", init_from=base, ff_dim=128, max_steps=8)
    # what is deliberate stays: a context model of the same shape, its context path fresh
    for architecture in ("concat", "capsule"):
        tuned = _run(tmp_path, architecture, init_from=base, architecture=architecture,
                     max_steps=8)
        assert tuned.state.step == 4


def test_init_from_a_run_whose_tokenizer_grew_keeps_its_embedding_rows(tmp_path):
    """Control tags appended to the tokenizer after the weights were trained: the embedding's
    rows are the init run's, a fresh row for each new piece."""
    from subctx.bundle import SpecialTokens
    from subctx_train.tokenizer import add_user_pieces, control_symbols, train_tokenizer
    from tests.helpers import CORPUS

    old = train_tokenizer([s for pair in CORPUS for s in pair] * 20, tmp_path / "old.model",
                          vocab_size=120, control_tags=False)
    _run(tmp_path, "old", spm_model=old).train()
    tags = control_symbols(SpecialTokens())
    (tmp_path / "old" / "spm.model").write_bytes(add_user_pieces(old.read_bytes(), tags))
    final = load_file(str(tmp_path / "old" / "final.safetensors"))["embed.weight"]
    tuned = _run(tmp_path, "tagged", init_from=tmp_path / "old", max_steps=8)
    embed = tuned.model.state_dict()["embed.weight"]
    assert embed.shape == (final.shape[0] + len(tags), final.shape[1])
    assert torch.equal(embed[:final.shape[0]], final)
    assert embed[final.shape[0]:].abs().sum() > 0


def test_resuming_as_another_model_is_refused_in_one_line(tmp_path, base):
    run = tmp_path / "run"
    shutil.copytree(base, run)
    with pytest.raises(RunError, match=r"checkpoint step-0000004 is of another model "
                                       r"\(d_model 32 → 64\)"):
        _run(tmp_path, "run", architecture="transformer", d_model=64, max_steps=8)
    with pytest.raises(RunError, match=r"\(architecture transformer → context_encoder\)"):
        _run(tmp_path, "run", architecture="context_encoder", max_steps=8)


def test_resuming_with_other_settings_says_which_in_one_line(tmp_path, base, capsys):
    run = tmp_path / "run"
    shutil.copytree(base, run)
    lr = json.loads((run / "config.json").read_text())["train"]["lr"]
    capsys.readouterr()
    _run(tmp_path, "run", architecture="concat", max_steps=6, lr=lr * 2).train()
    lines = [x for x in capsys.readouterr().err.splitlines() if x.startswith("warning:")]
    [line] = lines  # (concat's own defaults changed with it: max_k, k_probs, segment_shift)
    assert line.startswith(f"warning: {run} resumes at step 4 with other settings than it had: "
                           "architecture transformer → concat, ")
    assert f"lr {lr} → {lr * 2}" in line and "max_steps 4 → 6" in line
    assert line.endswith(" (config.json records it)")
    [resumed] = json.loads((run / "config.json").read_text())["resumed"]
    assert {"architecture", "max_steps", "lr"} <= set(resumed["changed"])
    _run(tmp_path, "run", architecture="concat", max_steps=6, lr=lr * 2).train()
    assert "warning" not in capsys.readouterr().err  # the same settings again: nothing new
