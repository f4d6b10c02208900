"""DESIGN.md: importing the app never imports torch; training stays importable without the
app's optional UI packages."""

import subprocess
import sys


def test_app_does_not_import_torch():
    code = ("import sys, subctx.cli, subctx.engine, subctx.review.app, subctx.review.loader; "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_training_does_not_need_textual():
    code = ("import sys; sys.modules['textual'] = None; "
            "import training.train, training.export, training.evaluate, training.report, "
            "training.corpora, training.cli; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr


def test_training_loop_runs_without_ctranslate2():
    """The GPU machine has torch but not ctranslate2: the trainer must not need it."""
    code = ("import sys; sys.modules['ctranslate2'] = None; sys.modules['textual'] = None; "
            "import training.train, training.cli, training.corpora; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr


def test_training_cli_as_a_module_knows_every_command_without_ctranslate2():
    """`python -m training.cli export` used to fail: main() ran before the later commands were
    registered. On the GPU machine (no ctranslate2) the recipe runs train and collect."""
    code = ("import sys, runpy; sys.modules['ctranslate2'] = None; "
            "sys.argv = ['training.cli', '--help']; runpy.run_module('training.cli', "
            "run_name='__main__')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    for command in ("train", "collect", "export", "back-translate", "self-translate",
                    "tokenizer", "dev-report"):
        assert command in out.stdout, out.stdout + out.stderr
    code = "import sys; sys.modules['ctranslate2'] = None; import training.bundle_card"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_backends_share_one_contract_without_importing_each_other():
    """engine.py and torch_backend.py used to import each other; both now import
    subctx.contract, and the scheduler needs neither CTranslate2 nor torch."""
    code = ("import sys; import subctx.torch_backend, subctx.pipeline, subctx.review.session; "
            "print('subctx.engine' in sys.modules, 'ctranslate2' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"], out.stderr
