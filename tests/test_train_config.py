"""The training config: one dataclass, preset files, and `--field VALUE` overrides."""

from dataclasses import fields
from importlib.resources import files

import pytest

from subctx_train.config import (
    ConfigError,
    TrainConfig,
    field_help,
    flag_name,
    load_config,
    make_config,
    preset_names,
    split_args,
)

PRESETS = ["cpu-deep", "cpu-small", "gpu-base", "gpu-big", "gpu-deep", "tiny"]


def test_presets_are_package_data_files():
    assert preset_names() == PRESETS
    for name in PRESETS:
        text = (files("subctx_train") / "configs" / f"{name}.toml").read_text(encoding="utf-8")
        assert text.startswith(f"# {name}: ")  # what the preset is for
    shapes = {name: (c.d_model, c.enc_layers, c.dec_layers, c.vocab_size, c.max_tokens)
              for name in PRESETS for c in [load_config(name)]}
    assert shapes == {"cpu-small": (256, 3, 3, 8000, 3000), "cpu-deep": (256, 6, 2, 8000, 3000),
                      "gpu-deep": (384, 6, 2, 16000, 12000), "gpu-big": (512, 12, 2, 16000, 12000),
                      "gpu-base": (512, 6, 6, 16000, 16000), "tiny": (32, 2, 1, 200, 400)}
    assert load_config("tiny").max_positions == 256 and load_config("cpu-small").lr == 1.0


def test_every_field_has_help_and_one_flag():
    names = [flag_name(f) for f in fields(TrainConfig)]
    assert len(set(names)) == len(names) and "weight" in names and "corpus-weights" not in names
    assert all(field_help(f).strip() for f in fields(TrainConfig))


def test_overrides_take_the_field_types():
    cfg = load_config("tiny", ["--max-steps", "7", "--lr=0.5", "--precision", "fp32",
                               "--weight", "subtitles=2", "--weight", "news=0.5",
                               "--max-k", "2", "--k-probs", "0.2,0.3", "--k-probs", "0.5",
                               "--cd-weight", "1", "--segment-shift", "0"])
    assert (cfg.max_steps, cfg.lr, cfg.precision, cfg.cd_weight) == (7, 0.5, "fp32", 1.0)
    assert isinstance(cfg.max_steps, int) and isinstance(cfg.cd_weight, float)
    assert cfg.corpus_weights == {"subtitles": 2.0, "news": 0.5}
    assert (cfg.max_k, cfg.k_probs, cfg.segment_shift) == (2, [0.2, 0.3, 0.5], 0)
    assert cfg.d_model == 32  # the rest is the preset's


@pytest.mark.parametrize("args,expected", [
    ([], False), (["--compile"], True), (["--compile", "--no-compile"], False),
    (["--compile=false"], False), (["--compile", "true"], True), (["--compile", "off"], False),
])
def test_bool_flags_bare_or_with_a_value(args, expected):
    assert load_config("tiny", args).compile is expected


def test_max_k_alone_trains_every_k_equally_and_the_architecture_has_the_last_word():
    assert load_config("tiny", ["--max-k", "1"]).k_probs == [0.5, 0.5]
    assert load_config("tiny", ["--max-k", "3"]).k_probs == [0.25] * 4
    assert load_config("tiny").k_probs == [0.3, 0.4, 0.2, 0.1]
    sentence = load_config("tiny", ["--architecture", "transformer", "--max-k", "1"])
    assert (sentence.max_k, sentence.k_probs, sentence.segment_shift) == (0, [1.0], 0)
    encoder = load_config("tiny", ["--architecture", "context_encoder", "--max-k", "3"])
    assert (encoder.max_k, encoder.k_probs) == (1, [0.2, 0.8])
    assert make_config("tiny", architecture="context_encoder").max_k == 1


def test_a_config_file_then_overrides(tmp_path):
    path = tmp_path / "run.toml"
    path.write_text('d_model = 64\nn_heads = 2\nlr = 1\narchitecture = "concat"\n'
                    '[corpus_weights]\nsubtitles = 2\n', encoding="utf-8")
    cfg = load_config(path, ["--weight", "news=0.5", "--n-heads", "4"])
    assert (cfg.d_model, cfg.n_heads, cfg.lr) == (64, 4, 1.0) and isinstance(cfg.lr, float)
    assert cfg.corpus_weights == {"subtitles": 2.0, "news": 0.5}
    assert cfg.max_tokens == TrainConfig().max_tokens  # a file starts from the defaults
    assert load_config(str(path)).d_model == 64


@pytest.mark.parametrize("args,message", [
    (["--max-kk", "1"], r"no such option --max-kk \(did you mean --max-k\? config fields: "
                        r"--d-model, .*--weight, .*--compile\)"),
    (["--max-k", "x"], "^--max-k x: expected an integer$"),
    (["--lr", "fast"], "^--lr fast: expected a number$"),
    (["--weight", "subtitles"], "^--weight subtitles: expected NAME=NUMBER$"),
    (["--weight", "=2"], "^--weight =2: expected NAME=NUMBER$"),
    (["--weight", "news=-1"], "corpus weights cannot be negative"),
    (["--compile", "--no-compile=yes"], "^--no-compile takes no value$"),
    (["--max-steps"], r"^--max-steps needs a value \(N\)$"),
    (["--architecture", "rnn"], "architecture is one of transformer, concat, .*not 'rnn'"),
    (["--precision", "fp16"], "precision is one of auto, bf16, fp32"),
    (["--own-context", "1.5"], "probabilities"),
    (["--max-k", "2", "--k-probs", "0.5,0.5"], "one weight for each K"),
    (["data.jsonl"], "unexpected argument 'data.jsonl'"),
])
def test_a_wrong_override_is_a_one_line_error(args, message):
    with pytest.raises(ConfigError, match=message) as caught:
        load_config("tiny", args)
    assert "\n" not in str(caught.value)


def test_wrong_presets_and_files(tmp_path):
    with pytest.raises(ConfigError, match="unknown preset 'huge' .choose from cpu-deep, "):
        load_config("huge")
    bad = tmp_path / "bad.toml"
    bad.write_text("d_model = 32\nlearning_rate = 2\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="unknown field 'learning_rate'"):
        load_config(bad)
    bad.write_text('max_k = "two"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"max_k = 'two': expected an integer"):
        load_config(bad)
    bad.write_text("compile = 1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="expected true or false"):
        load_config(bad)
    bad.write_text("d_model = \n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not TOML"):
        load_config(bad)
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.toml")


def test_data_and_overrides_are_told_apart():
    data, overrides = split_args(["a.jsonl", "--max-k", "1", "b/", "--compile", "c.jsonl",
                                  "--weight=x=2", "--no-compile", "d.jsonl"])
    assert data == ["a.jsonl", "b/", "c.jsonl", "d.jsonl"]
    assert overrides == ["--max-k", "1", "--compile", "--weight=x=2", "--no-compile"]


# Every config flag that subctx_train/gpu_recipe.sh, compare.sh and the docs pass to `train`
RECIPE_ARGS = ["--architecture", "concat", "--cd-weight", "0.01", "--segment-shift", "0",
               "--noisy-context", "0.3", "--own-context", "0.5", "--weight", "subtitles=2",
               "--weight", "synthetic=0.5", "--budget-minutes", "13", "--max-steps", "1500",
               "--max-k", "1", "--target-context", "none", "--max-tokens", "3000",
               "--compile", "--precision", "bf16", "--lr", "0.25", "--direction", "ru-en",
               "--dropout", "0.1", "--vocab-size", "8000", "--seed", "7"]


def test_the_flags_the_recipes_pass():
    cfg = load_config("gpu-deep", RECIPE_ARGS)
    assert (cfg.cd_weight, cfg.noisy_context, cfg.own_context, cfg.max_k) == (0.01, 0.3, 0.5, 1)
    assert cfg.corpus_weights == {"subtitles": 2.0, "synthetic": 0.5}
    assert (cfg.target_context, cfg.direction, cfg.compile, cfg.lr) == ("none", "ru-en", True,
                                                                         0.25)


@pytest.mark.parametrize("args,message", [
    (["--eval-every", "0"], "--eval-every 0: must be at least 1"),
    (["--warmup", "0"], "--warmup 0: must be at least 1"),
    (["--n-heads", "0"], "--n-heads 0: must be at least 1"),
    (["--enc-layers", "0"], "--enc-layers 0: must be at least 1"),
    (["--dropout", "1.5"], r"--dropout 1.5: must be in \[0, 1\)"),
    (["--dropout", "1"], r"--dropout 1: must be in \[0, 1\)"),
    (["--d-model", "33"], r"--d-model 33: must be even and a multiple of --n-heads \(2\), "
                          "e.g. 34"),
    (["--n-heads", "3"], r"--d-model 32: must be even and a multiple of --n-heads \(3\), "
                         "e.g. 36"),
    (["--k-probs", "0.5,-0.5", "--max-k", "1"], "--k-probs 0.5,-0.5: each weight must be 0 or "
                                                "more, not all 0"),
    (["--k-probs", "0,0", "--max-k", "1"], "--k-probs 0,0: each weight must be 0 or more"),
    (["--k-probs", "1,1,1", "--max-k", "1"], r"--k-probs 1,1,1: k_probs needs one weight for "
                                             r"each K in 0..max_k \(2 for --max-k 1\), not 3"),
    (["--max-positions", "4"], "--max-positions 4: must be at least 16"),
    (["--keep-last", "0"], "--keep-last 0: must be at least 1"),
    (["--patience", "0"], "--patience 0: must be at least 1"),
    (["--lr", "0"], "--lr 0: must be more than 0"),
    (["--lr", "-1"], "--lr -1: must be more than 0"),
    (["--lr", "inf"], "--lr inf: must be a finite number"),
    (["--label-smoothing", "2"], r"--label-smoothing 2: must be in \[0, 1\)"),
    (["--max-tokens", "0"], "--max-tokens 0: must be at least 1"),
    (["--max-gap", "-1"], "--max-gap -1: must be 0 or more"),
    (["--clip-norm", "-1"], "--clip-norm -1: must be more than 0"),
    (["--clip-norm", "0"], "--clip-norm 0: must be more than 0 .at 0 clipping would zero"),
    (["--segment-shift", "-3"], r"--segment-shift -3: must be 0 \(none\) or more"),
    (["--budget-minutes", "-1"], r"--budget-minutes -1: must be 0 \(no limit\) or more"),
    (["--max-steps", "0"], "--max-steps 0: must be at least 1"),
    (["--max-steps", "-5"], "--max-steps -5: must be at least 1"),
    (["--cd-weight", "-0.5"], "--cd-weight -0.5: must be 0 or more"),
])
def test_an_out_of_range_value_is_a_one_line_error_naming_the_option(args, message):
    with pytest.raises(ConfigError, match=f"^{message}") as caught:
        load_config("tiny", args)
    assert "\n" not in str(caught.value)


def test_a_file_value_out_of_range_is_refused_as_an_override_is(tmp_path):
    path = tmp_path / "run.toml"
    path.write_text("eval_every = 0\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="^--eval-every 0: must be at least 1$"):
        load_config(path)
    with pytest.raises(ConfigError, match=r"^--dropout 1.5: must be in \[0, 1\)$"):
        make_config("tiny", dropout=1.5)


def test_the_edges_of_each_range_are_accepted():
    cfg = load_config("tiny", ["--dropout", "0", "--label-smoothing", "0", "--max-gap", "0",
                               "--segment-shift", "0", "--budget-minutes", "0", "--max-k", "1",
                               "--k-probs", "0,1", "--max-steps", "1", "--eval-every", "1",
                               "--warmup", "1", "--keep-last", "1", "--patience", "1",
                               "--max-positions", "16", "--clip-norm", "0.5", "--cd-weight", "0",
                               "--d-model", "36", "--n-heads", "6"])
    assert (cfg.k_probs, cfg.max_positions, cfg.d_model, cfg.n_heads) == ([0.0, 1.0], 16, 36, 6)
    # the values given are checked, not what the architecture makes of them
    with pytest.raises(ConfigError, match="--segment-shift -3"):
        load_config("tiny", ["--architecture", "transformer", "--segment-shift", "-3"])


def test_every_preset_and_shipped_training_config_stays_valid():
    import json
    from pathlib import Path

    for name in PRESETS:
        load_config(name, RECIPE_ARGS)
    root = Path(__file__).resolve().parent.parent / "assets" / "models"
    for manifest in root.glob("*/subctx.json"):
        config = json.loads(manifest.read_text(encoding="utf-8"))["info"]["training"]["config"]
        assert TrainConfig.from_dict(config).max_k == config["max_k"], manifest


def test_a_recorded_config_out_of_range_says_it_is_the_record():
    record = {**load_config("tiny").to_dict(), "lr": -1.0}
    with pytest.raises(ConfigError, match="^the recorded training config is not valid: --lr -1: "
                                          "must be more than 0$"):
        TrainConfig.from_dict(record)
