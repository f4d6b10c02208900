"""The GPU recipe end to end on this CPU (--cpu: tiny preset): pack, start in the background,
wait, collect the bf16 weights (<= 8 files of <= 16 MiB), export locally and translate."""

import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import torch

from subctx.backends.ct2 import CTranslate2Backend
from subctx.contract import Request
from subctx_train.bundle_card import export_run
from subctx_train.data import read_weights
from tests.helpers import CORPUS, build_tiny_bundle

ROOT = Path(__file__).resolve().parent.parent


def _docs(path: Path, copies: int, own: bool = False) -> Path:
    """Timed fixture documents; `own`: with the model's own translations (`mt`)."""
    with open(path, "w", encoding="utf-8") as handle:
        for c in range(copies):
            segments = [{"src": s, "tgt": t, "start": 2.0 * i, "end": 2.0 * i + 1}
                        for i, (s, t) in enumerate(CORPUS)]
            if own:
                for segment in segments:
                    segment["mt"] = segment["tgt"].rstrip(".!?")
            handle.write(json.dumps({"doc": f"fixture/{c}", "domain": "subtitles",
                                     "segments": segments}, ensure_ascii=False) + "\n")
    return path


def _runner(tmp_path: Path, timeout: int = 600, **extra: str):
    """`bash subctx_train/gpu_recipe.sh ARGS` with its pack and device folder under `tmp_path`."""
    env = {**os.environ, "PYTHON": sys.executable, "PACK": str(tmp_path / "recipe.tar.xz"),
           "RECIPE_DIR": str(tmp_path / "device"), "POLL": "1", **extra}

    def recipe(*args, check=True):
        return subprocess.run(["bash", str(ROOT / "subctx_train/gpu_recipe.sh"), *args], env=env,
                              capture_output=True, text=True, check=check, timeout=timeout)
    return recipe


def _rows_runner(tmp_path: Path, **extra: str):
    """The runner for `rows`: one thread per run, the tiny preset's bundle as the shipped one."""
    return _runner(tmp_path, OMP_NUM_THREADS="1",
                   EMBEDDED=str(_tiny_preset_bundle(tmp_path / "shipped")), **extra)


def test_recipe_end_to_end_on_cpu(tmp_path):
    recipe = _runner(tmp_path, timeout=300)
    train = _docs(tmp_path / "train.jsonl", 6)
    dev = _docs(tmp_path / "dev.jsonl", 1)
    assert "packed" in recipe("pack", "--train", str(train), "--dev", str(dev)).stdout
    started = recipe("start", "--cpu", "--", "--max-steps", "12", "--architecture", "concat")
    assert "background" in started.stdout
    waited = recipe("wait", "--seconds", "240", check=False)
    assert waited.returncode == 0, waited.stdout + waited.stderr
    out = tmp_path / "OUT"
    recipe("collect", str(out))
    files = sorted(out.iterdir())
    assert len(files) <= 8 and all(f.stat().st_size <= 16 * 2**20 for f in files)
    assert any(f.name.startswith("final-") for f in files)
    metrics = (out / "metrics.jsonl").read_text().splitlines()
    assert json.loads(metrics[-1])["step"] == 12 and "dev_nll" in json.loads(metrics[-1])
    bundle = export_run(out, tmp_path / "bundle", "int8")
    manifest = json.loads((bundle / "subctx.json").read_text())
    assert manifest["architecture"] == "concat" and manifest["info"]["training"]["steps"] == 12
    card = (bundle / "README.md").read_text(encoding="utf-8")
    assert "36 training pairs (0 back-translated" in card and "fixture 36" in card
    assert "CPU core" in manifest["info"]["training"]["device"]  # the training machine's
    engine = CTranslate2Backend(bundle, device="cpu", threads=1)
    [t] = engine.translate([Request("Where is the door?", ("Thank you very much.",),
                                    ("Большое спасибо.",))], beam_size=2)
    assert "⁇" not in t.text and math.isfinite(t.score)  # 12 tiny steps: any text will do


def test_ddp_under_torchrun_on_cpu(tmp_path):
    """The DDP path (gloo on CPU) with two processes: equal shares of each epoch, one final."""
    torchrun = Path(sys.executable).with_name("torchrun")
    train = _docs(tmp_path / "train.jsonl", 6)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [str(torchrun), "--nproc_per_node", "2", "-m", "subctx_train.cli", "train", str(train),
         "--run-dir", str(tmp_path / "run"), "--preset", "tiny", "--max-steps", "6",
         "--device", "cpu", "--architecture", "concat"],
        env=env, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    log = done.stdout + done.stderr
    assert "DDP: 2 process(es), gloo" in log and log.count("training examples") == 1
    metrics = [json.loads(line) for line in
               (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert metrics[-1]["step"] == 6
    assert (tmp_path / "run" / "final.safetensors").exists()


def _tiny_preset_bundle(out: Path) -> Path:
    """A CTranslate2 bundle of the tiny preset's shape, as if shipped after 5 updates."""
    from subctx_train.config import make_config

    return build_tiny_bundle(out, max_k=1, shape=make_config("tiny").shape(),
                             info={"training": {"steps": 5, "config": {"dropout": 0.0}}},
                             quantization="int8")


def test_rows_side_by_side_then_report_on_cpu(tmp_path):
    """The comparison rows start at once on shared data, `wait` waits for all of them, and
    `report` evaluates every row where it trained (PyTorch bundles, no ctranslate2 needed)."""
    from tests.test_end_to_end import _write_dev

    recipe = _rows_runner(tmp_path, CPU="1")

    train = _docs(tmp_path / "train.jsonl", 6, own=True)
    devroot = _write_dev(tmp_path / "devroot")
    recipe("pack", "--train", str(train), "--bt", str(_docs(tmp_path / "bt.jsonl", 1)),
           "--dev", str(devroot / "friends_dev.jsonl"), "--devroot", str(devroot))
    started = recipe("rows", "--cpu", "--steps", "3")
    # the 9 rows, the own-context one (the data has `mt`) and the shipped model fine-tuned
    assert started.stdout.count("training started") == 11
    waited = recipe("wait", "--seconds", "400", check=False)
    assert waited.returncode == 0, waited.stdout[-3000:] + waited.stderr[-3000:]
    out = tmp_path / "OUT"
    reported = recipe("report", str(out), "--ctxpro-limit", "4", "--beam", "2", check=False)
    assert reported.returncode == 0, reported.stdout[-3000:] + reported.stderr[-3000:]
    report = json.loads((out / "dev_report.json").read_text())["models"]
    assert len(report) == 11
    by_name = {Path(k).name: v for k, v in report.items()}
    assert [c["context"] for c in by_name["concat-cd"]] == [1, 0, "1 (random)"]
    assert [c["context"] for c in by_name["baseline"]] == [0]  # reads no context
    assert [c["context"] for c in by_name["concat-src"]] == [1, 0, "1 (random)"]
    metrics = json.loads((out / "metrics.json").read_text())
    steps = {name: rows[-1]["step"] for name, rows in metrics.items()}
    assert steps.pop("embedded-own") == 5 + 3  # 3 more than the shipped model's 5
    assert steps == dict.fromkeys(set(by_name) - {"embedded-own"}, 3)
    log = (tmp_path / "device/runs/embedded-own.log").read_text()
    loaded = re.search(r"initialised (\d+)/(\d+) tensors", log)
    assert loaded and loaded[1] == loaded[2]  # every weight from the shipped bundle
    assert (out / "attention" / "attention.json").exists()
    assert len([f for f in out.rglob("*") if f.is_file()]) <= 8


def test_rows_from_embedded_fine_tune_the_shipped_model(tmp_path):
    """`rows --from-embedded`: every system starts from the shipped model's weights (what fits
    its architecture) and trains as many updates more; the back-translation ablations, which a
    model already trained on back-translations cannot show, are left out."""
    recipe = _rows_runner(tmp_path)

    recipe("pack", "--train", str(_docs(tmp_path / "train.jsonl", 4, own=True)),
           "--dev", str(_docs(tmp_path / "dev.jsonl", 1)))
    started = recipe("rows", "--cpu", "--steps", "2", "--from-embedded")
    assert started.stdout.count("training started") == 8
    waited = recipe("wait", "--seconds", "400", check=False)
    assert waited.returncode == 0, waited.stdout[-3000:] + waited.stderr[-3000:]
    runs = tmp_path / "device" / "runs"
    names = {p.name for p in runs.iterdir() if p.is_dir()}
    assert names == {"baseline", "concat-plain", "concat-cd", "concat-cd-shift",
                     "context-encoder", "capsule", "concat-src", "embedded-own"}
    for name in names:
        last = (runs / name / "metrics.jsonl").read_text().splitlines()[-1]
        assert json.loads(last)["step"] == 5 + 2, name
        loaded = re.search(r"initialised (\d+)/(\d+) tensors", (runs / f"{name}.log").read_text())
        assert loaded, name
        if name in {"baseline", "concat-cd", "embedded-own"}:
            assert loaded[1] == loaded[2]  # the same shape as the shipped model: every weight
        if name in {"context-encoder", "capsule"}:
            assert int(loaded[1]) < int(loaded[2])  # their context modules start fresh


def test_rows_only_starts_the_named_rows_with_their_share_of_the_gpu(tmp_path):
    """`rows --only`: the back-translation ablation alone, its runs sharing the GPU memory."""
    recipe = _rows_runner(tmp_path)

    recipe("pack", "--train", str(_docs(tmp_path / "train.jsonl", 2)),
           "--bt", str(_docs(tmp_path / "bt.jsonl", 1)),
           "--dev", str(_docs(tmp_path / "dev.jsonl", 1)))
    bad = recipe("rows", "--cpu", "--only", "recipe-typo", check=False)
    assert bad.returncode == 2 and "no row matches --only recipe-typo" in bad.stderr
    started = recipe("rows", "--cpu", "--steps", "1", "--only", "recipe,recipe-no-bt")
    assert "2 runs, each capped at 0.44 of the GPU memory" in started.stdout
    assert started.stdout.count("training started") == 2
    waited = recipe("wait", "--seconds", "300", check=False)
    assert waited.returncode == 0, waited.stdout[-3000:] + waited.stderr[-3000:]
    runs = tmp_path / "device" / "runs"
    assert {p.name for p in runs.iterdir() if p.is_dir()} == {"recipe", "recipe-no-bt"}
    sources = {name: json.loads((runs / name / "config.json").read_text())["data"]["sources"]
               for name in ("recipe", "recipe-no-bt")}
    assert len(sources["recipe"]) == 2 and len(sources["recipe-no-bt"]) == 1


def _only_rows(tmp_path, *names):
    """`rows --only NAMES` for one update each on a tiny pack, run to the end: the runs folder."""
    recipe = _rows_runner(tmp_path)
    recipe("pack", "--train", str(_docs(tmp_path / "train.jsonl", 2)),
           "--dev", str(_docs(tmp_path / "dev.jsonl", 1)))
    started = recipe("rows", "--cpu", "--steps", "1", "--only", ",".join(names))
    assert started.stdout.count("training started") == len(names)
    waited = recipe("wait", "--seconds", "300", check=False)
    assert waited.returncode == 0, waited.stdout[-3000:] + waited.stderr[-3000:]
    return tmp_path / "device" / "runs"


def test_the_machine_drafted_rows_start_only_when_named(tmp_path):
    """Do the machine-drafted corpora help: the campaign's weights with and without them, on
    the same updates; `rows` without --only leaves the pair out (the test above counts)."""
    runs = _only_rows(tmp_path, "drafted", "no-drafted")
    weights = {name: json.loads((runs / name / "config.json").read_text())
               ["train"]["corpus_weights"] for name in ("drafted", "no-drafted")}
    campaign = read_weights(ROOT / "subctx_train/configs/weights/enru-all.toml")
    assert weights["no-drafted"].pop("machine-drafted") == 0
    assert weights["drafted"].pop("machine-drafted") == campaign["machine-drafted"] > 0
    assert weights["drafted"] == weights["no-drafted"] and weights["drafted"]["subtitles"] == 4


def test_the_encoder_side_row_starts_only_when_named(tmp_path):
    """The previous translation read by the encoder: concat-cd's recipe with the other target
    side, opt-in like the drafted pair."""
    runs = _only_rows(tmp_path, "concat-encoder")
    config = json.loads((runs / "concat-encoder" / "config.json").read_text())["train"]
    assert (config["target_context"], config["cd_weight"], config["max_k"]) == \
        ("encoder", 0.01, 1)


def test_unknown_command_prints_the_whole_header_and_nothing_else(tmp_path):
    """The usage text is the script's header comment, however long it grows."""
    shown = _runner(tmp_path)("no-such-command", check=False)
    header = (ROOT / "subctx_train/gpu_recipe.sh").read_text().splitlines()[1:]
    header = header[:next(i for i, line in enumerate(header) if not line.startswith("#"))]
    assert shown.returncode == 2
    assert shown.stdout.splitlines() == header and "set -euo" not in shown.stdout


def _mono(path: Path, docs: int) -> Path:
    """Russian documents (no English side), timed, as ru-mono has them: four lines the
    training fixture has, then two it has not."""
    with open(path, "w", encoding="utf-8") as handle:
        for d in range(docs):
            lines = [t for _, t in CORPUS[d % 3:d % 3 + 4]] + [f"Строка {d}.", f"Ещё {d}!"]
            segments = [{"src": None, "tgt": t, "start": 3.0 * i, "end": 3.0 * i + 2}
                        for i, t in enumerate(lines)]
            handle.write(json.dumps({"doc": f"plays/{d}", "domain": "drama",
                                     "segments": segments}, ensure_ascii=False) + "\n")
    return path


def test_stage1_ruen_model_then_back_translation_on_cpu(tmp_path):
    """Stage 1 on this CPU: the columnar pack, `rt` (the ru->en model on the real pairs
    reversed, its weights file), `pack-mono` (known Russian left out), `bt` with the run and
    with a CTranslate2 bundle (unbundled to PyTorch), `bt-collect` in parts, `bt-unpack`."""
    recipe = _runner(tmp_path, timeout=400, OMP_NUM_THREADS="1",
                     MONO_PACK=str(tmp_path / "mono.tar.xz"))
    train = _docs(tmp_path / "train.jsonl", 6)
    packed = recipe("pack", "--train", str(train), "--dev", str(_docs(tmp_path / "dev.jsonl", 1)))
    assert "packed" in packed.stdout and "working tree" in packed.stdout
    started = recipe("rt", "--cpu", "--", "--max-steps", "30")
    assert "training started" in started.stdout
    waited = recipe("wait", "--seconds", "300", check=False)
    assert waited.returncode == 0, waited.stdout[-3000:] + waited.stderr[-3000:]
    run = tmp_path / "device" / "runs" / "ruen"
    config = json.loads((run / "config.json").read_text())["train"]
    assert config["direction"] == "ru-en" and config["architecture"] == "transformer"
    assert config["corpus_weights"]["books"] == 2.0  # configs/weights/ruen-all.toml
    # the unpacked training data is the packed data
    unpacked = tmp_path / "device" / "data" / "train" / "train.jsonl"
    assert [json.loads(line) for line in unpacked.read_text().splitlines()] == [
        json.loads(line) for line in train.read_text().splitlines()]

    mono = _mono(tmp_path / "mono.jsonl", 4)
    everything = recipe("pack-mono", str(mono), "--skip-done", str(tmp_path / "dev.jsonl"))
    assert "24 segments" in everything.stdout  # nothing known, nothing done: 4 x 6
    packed = recipe("pack-mono", str(mono), "--known", str(train))
    assert "8 segments" in packed.stdout and "(16 known left out)" in packed.stdout
    # the rt run, exported to PyTorch; sampled (30 tiny updates: beam search's best is empty)
    started = recipe("bt", "--cpu", "--sampling", "sample")
    assert "back-translation started" in started.stdout
    from subctx_train.config import make_config

    # a Russian-to-English CTranslate2 bundle (back-translate refuses another direction),
    # unbundled first
    ct2 = build_tiny_bundle(tmp_path / "ct2", max_k=1, shape=make_config("tiny").shape(),
                            info={"training": {"steps": 5, "config": {
                                "dropout": 0.0, "direction": "ru-en"}}},
                            quantization="int8")
    recipe("bt", "--cpu", "--model", str(ct2), "--name", "ct2", "--beam", "2")
    # a second part of the Russian documents, carried by a later call: a run of its own
    part2 = _runner(tmp_path, timeout=400, OMP_NUM_THREADS="1",
                    MONO_PACK=str(tmp_path / "mono-2.tar.xz"))
    more = tmp_path / "more" / "more.jsonl"
    more.parent.mkdir()
    more.write_text(mono.read_text(encoding="utf-8").replace("plays/", "more/"),
                    encoding="utf-8")
    part2("pack-mono", str(more.parent), "--known", str(train))
    assert "background" in part2("bt", "--cpu", "--sampling", "sample").stdout
    waited = recipe("wait", "--seconds", "300", check=False)
    assert waited.returncode == 0, waited.stdout[-3000:] + waited.stderr[-3000:]
    for run, file in (("sample-mono", "mono"), ("ct2-mono", "mono"), ("sample-mono-2", "more")):
        log = (tmp_path / "device" / "runs" / f"bt-{run}.log").read_text()
        assert f"{file}.jsonl: 8 sentences to translate" in log, log
    out = tmp_path / "OUT"
    recipe("bt-collect", "--name", "sample", str(out))
    assert [f.name for f in out.iterdir()] == ["bt-sample.tar.xz.part0"]
    local = tmp_path / "bt-local"
    shown = recipe("bt-unpack", str(out), str(local)).stdout
    added = int(re.search(r"(\d+) documents added", shown)[1])
    assert (local / "sample" / "more.jsonl").exists()  # the second part's documents
    docs = [json.loads(line) for line in (local / "sample" / "mono.jsonl").read_text(
        encoding="utf-8").splitlines()]
    assert len(docs) == added >= 3  # a document whose every sentence came out empty is left out
    assert [d["doc"] for d in docs] == sorted(d["doc"] for d in docs)  # document order
    for d in docs:
        i = int(d["doc"].split("/")[1])
        assert d["synthetic"] and d["domain"] == "drama"
        for s in d["segments"]:  # the known lines left out, the others with their timings
            assert (s["tgt"], s["start"]) in {(f"Строка {i}.", 12.0), (f"Ещё {i}!", 15.0)}
            assert s["src"]
    again = recipe("bt-unpack", str(out), str(local)).stdout  # nothing twice
    assert f"0 documents added, {added} were there" in again


def test_back_translations_in_a_second_pack_join_the_first_on_a_warm_machine(tmp_path):
    """Stage 2's carry: the main pack in one call (`prepare`), the synthetic documents in the
    next (`add-bt`, once), then `start` trains on both without the main pack carried again."""
    recipe = _runner(tmp_path, timeout=300, DEVICE_DIR=str(tmp_path / "dotdevice"))
    train = _docs(tmp_path / "train.jsonl", 3)
    dev = _docs(tmp_path / "dev.jsonl", 1)
    synthetic = tmp_path / "synthetic"
    synthetic.mkdir()
    _docs(synthetic / "novels.jsonl", 2)
    recipe("pack", "--train", str(train), "--dev", str(dev))
    assert "packed" in recipe("pack-bt", "beam", str(synthetic)).stdout
    archive = tmp_path / "dotdevice" / "bt-beam.tar.xz"
    assert archive.is_file()
    assert recipe("add-bt", str(archive), check=False).returncode == 2  # nothing unpacked yet
    recipe("prepare")
    (tmp_path / "recipe.tar.xz").unlink()  # a later call does not carry the main pack
    assert "1 file(s) added" in recipe("add-bt", str(archive)).stdout
    assert "added already" in recipe("add-bt", str(archive)).stdout
    added = tmp_path / "device" / "data" / "bt" / "bt-beam-novels.jsonl"
    assert len(added.read_text(encoding="utf-8").splitlines()) == 2
    started = recipe("start", "--cpu", "--", "--max-steps", "2", "--architecture", "concat")
    assert "background" in started.stdout
    assert recipe("wait", "--seconds", "240", check=False).returncode == 0
    command = (tmp_path / "device" / "run.sh").read_text()
    assert str(tmp_path / "device" / "data" / "bt") in command


def test_park_takes_the_other_bundles_out_of_the_tree_and_unpark_brings_them_back(tmp_path):
    """A device call copies the working tree: the opt-in bundles wait in .device/parked while a
    session's packs travel, the shipped default stays (rows and start read it)."""
    models = tmp_path / "models"
    for name in ("en-ru", "en-ru-controls", "other"):
        (models / name).mkdir(parents=True)
        (models / name / "model.bin").write_bytes(name.encode())
    docs = tmp_path / "docs"
    (docs / "comparison").mkdir(parents=True)
    (docs / "comparison" / "README.md").write_text("table")
    recipe = _runner(tmp_path, MODELS=str(models), EMBEDDED=str(models / "en-ru"),
                     DEVICE_DIR=str(tmp_path / "device-dir"), DOCS=str(docs))
    shown = recipe("park").stdout
    assert docs.is_dir()  # a plain park leaves the documentation
    parked = tmp_path / "device-dir" / "parked"
    assert sorted(p.name for p in models.iterdir()) == ["en-ru"]
    assert sorted(p.name for p in parked.iterdir()) == ["en-ru-controls", "other"]
    assert "the working tree:" in shown and "unpark" in shown
    (models / "other").mkdir()  # a bundle of that name again: refused, nothing moves
    refused = recipe("park", check=False)
    assert refused.returncode == 2 and "is there already" in refused.stderr
    assert sorted(p.name for p in models.iterdir()) == ["en-ru", "other"]
    (models / "other").rmdir()
    recipe("unpark")
    assert sorted(p.name for p in models.iterdir()) == ["en-ru", "en-ru-controls", "other"]
    assert (models / "other" / "model.bin").read_bytes() == b"other"
    assert not list(parked.iterdir())
    recipe("park", "--all")  # the bigger model's sessions: the default travels not either
    assert not list(models.iterdir()) and len(list(parked.iterdir())) == 3
    assert not docs.exists()  # nor the documentation: the pack needs the room
    recipe("unpark")
    assert sorted(p.name for p in models.iterdir()) == ["en-ru", "en-ru-controls", "other"]
    assert (docs / "comparison" / "README.md").read_text() == "table"


def test_a_pack_counts_the_tree_as_it_stands_with_a_tracked_bundle_parked(tmp_path):
    """`pack-bt` in a tree whose tracked files are not all there (a parked bundle): the
    missing files count nothing and the pack is written (it used to stop without a word)."""
    tree = tmp_path / "tree"
    (tree / "subctx_train").mkdir(parents=True)
    (tree / "subctx_train" / "gpu_recipe.sh").write_text(
        (ROOT / "subctx_train/gpu_recipe.sh").read_text())
    (tree / "parked.bin").write_bytes(b"x" * 1000)
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    for args in (["init", "-q"], ["add", "."]):
        subprocess.run(["git", *args], cwd=tree, check=True, env=env)
    (tree / "parked.bin").unlink()
    synthetic = tmp_path / "synthetic"
    synthetic.mkdir()
    _docs(synthetic / "novels.jsonl", 2)
    shown = subprocess.run(["bash", str(tree / "subctx_train/gpu_recipe.sh"), "pack-bt", "beam",
                            str(synthetic)], capture_output=True, text=True, timeout=120,
                           env={**env, "PYTHON": sys.executable, "PYTHONPATH": str(ROOT),
                                "DEVICE_DIR": str(tmp_path / "dotdevice")})
    assert shown.returncode == 0, shown.stderr
    assert "(the working tree: 0.0 MiB)" in shown.stdout
    assert (tmp_path / "dotdevice" / "bt-beam.tar.xz").is_file()


SESSION_TIMES = {"CPU": "1", "CHECK": "1", "RESERVE": "5", "TRAIN_END": "40",
                 "CALL_SECONDS": "200", "THROUGHPUT_SECONDS": "120",
                 "THROUGHPUT_OPTS": "--setting baseline --setting fused --steps 2 --warmup 1 "
                                    "--examples 200"}


def test_session_ruen_measures_the_trainer_then_trains_with_the_fastest_setting(tmp_path):
    """S1's first call as it runs on the GPU (here on the CPU, tiny): the throughput report,
    the Russian-to-English run with its fastest setting, the weights in OUT/ruen; `finish`
    (the second call) brings the final weights."""
    recipe = _runner(tmp_path, **SESSION_TIMES)
    recipe("pack", "--train", str(_docs(tmp_path / "train.jsonl", 4)),
           "--dev", str(_docs(tmp_path / "dev.jsonl", 1)))
    first = tmp_path / "OUT1"
    done = recipe("session-ruen", str(first), "--", "--max-steps", "6", check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads((first / "throughput-tiny.json").read_text())
    assert [r["setting"] for r in report["rows"]] == ["baseline", "fused"]
    command = (tmp_path / "device" / "runs" / "ruen.sh").read_text()
    assert "--adam-impl" in command and "--direction ru-en" in command
    assert any(f.name.startswith("final-") for f in (first / "ruen").iterdir())
    second = tmp_path / "OUT2"
    recipe("finish", "--name", "ruen", str(second))
    bundle = export_run(second, tmp_path / "bundle", "int8")
    assert json.loads((bundle / "subctx.json").read_text())["info"]["training"]["steps"] == 6


def test_a_run_that_dies_of_a_measured_setting_starts_again_without_it(tmp_path):
    """A speed setting the GPU cannot run (a compile failure, say) must not cost the session:
    the run starts once more without the measured settings, in the time left."""
    recipe = _runner(tmp_path, **{**SESSION_TIMES, "THROUGHPUT_SECONDS": "1"})
    recipe("pack", "--train", str(_docs(tmp_path / "train.jsonl", 4)),
           "--dev", str(_docs(tmp_path / "dev.jsonl", 1)))
    first = tmp_path / "OUT1"
    first.mkdir()
    bad = {"rows": [{"preset": "tiny", "setting": "fused", "target_tokens_per_s": 10.0,
                     "warmup_s": 0.0, "steps_per_s": 1.0, "max_tokens": 1000,
                     "overrides": {"adam_impl": "bogus"}}]}
    (first / "throughput-tiny.json").write_text(json.dumps(bad))  # the 1 s run writes none
    done = recipe("session-ruen", str(first), "--", "--max-steps", "4", check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "--adam-impl bogus" in done.stdout
    assert "once more without the measured settings" in done.stdout
    command = (tmp_path / "device" / "runs" / "ruen.sh").read_text()
    assert "bogus" not in command
    assert any(f.name.startswith("final-") for f in (first / "ruen").iterdir())


def test_session_big_in_int8_then_a_continuation_from_the_stash(tmp_path):
    """Stage 2's calls: a run from scratch comes back in int8; the next session stashes it,
    goes on from it (its step count too) and `finish` brings that one back."""
    recipe = _runner(tmp_path, **SESSION_TIMES, SPEED_ROWS_TOKENS="800")
    recipe("pack", "--train", str(_docs(tmp_path / "train.jsonl", 4)),
           "--bt", str(_docs(tmp_path / "bt.jsonl", 1)),
           "--dev", str(_docs(tmp_path / "dev.jsonl", 1)))
    first = tmp_path / "OUT1"
    done = recipe("session-big", str(first), "--", "--max-steps", "4", check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    # the shape's own speed rows, measured while the run loaded its data, come back as a line
    line = [x for x in done.stdout.splitlines() if x.startswith("SPEED-ROWS ")]
    assert line, done.stdout[-3000:]
    rows = json.loads(line[0][len("SPEED-ROWS "):])["rows"]
    assert [r["setting"] for r in rows] == ["no-sync", "tokens800"]
    measured = tmp_path / "throughput-tiny.json"
    measured.write_text(line[0][len("SPEED-ROWS "):])
    from safetensors.torch import load_file
    chunks = [load_file(str(f)) for f in first.glob("final-*.safetensors")]
    assert any(t.dtype == torch.int8 for c in chunks for t in c.values())
    recipe("stash", str(first))
    init = tmp_path / "device" / "init"
    shutil.rmtree(tmp_path / "device" / "run")  # the next session's machine starts bare
    (tmp_path / "device" / "done").unlink()
    second = tmp_path / "OUT2"
    recipe = _runner(tmp_path, **SESSION_TIMES, SPEED_ROWS_SECONDS="0",
                     THROUGHPUT=str(measured))  # what the first session measured
    done = recipe("session-big", str(second), "--", "--init-from", str(init),
                  "--max-steps", "7", check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "--adam-impl fused --log-every 100" in (tmp_path / "device" / "run.sh").read_text()
    log = (tmp_path / "device" / "run.log").read_text()
    loaded = re.search(r"initialised (\d+)/(\d+) tensors", log)
    assert loaded and loaded[1] == loaded[2]
    third = tmp_path / "OUT3"
    recipe("finish", "--dtype", "int8", str(third))
    metrics = (third / "metrics.jsonl").read_text().splitlines()
    assert json.loads(metrics[-1])["step"] == 7
    config = json.loads((third / "config.json").read_text())
    assert [stage["steps"] for stage in config["pretraining"]] == [4]  # the first session's
    shutil.rmtree(tmp_path / "device" / "init")  # here, the stash is gone: the card has it
    bundle = export_run(third, tmp_path / "bundle", "int8")
    training = json.loads((bundle / "subctx.json").read_text())["info"]["training"]
    assert [stage["steps"] for stage in training["pretraining"]] == [4]
    assert config["train"]["control_share"] == 0.5
    assert config["train"]["corpus_weights"]["subtitles"] == 4


def test_session_rows_reports_in_the_background_and_finish_report_brings_it(tmp_path):
    """S2: the rows side by side, then their report started in the background; the second
    call's `finish-report` waits for it and brings the whole of it."""
    from tests.test_end_to_end import _write_dev

    measured = tmp_path / "throughput-gpu-deep.json"  # what S1 brought back
    measured.write_text(json.dumps({"rows": [
        {"preset": "gpu-deep", "setting": "no-sync", "target_tokens_per_s": 10.0,
         "warmup_s": 0.0, "steps_per_s": 1.0, "max_tokens": 12000,
         "overrides": {"adam_impl": "fused", "log_every": 100}}]}))
    recipe = _rows_runner(tmp_path, **{**SESSION_TIMES, "CALL_SECONDS": "1"},
                          ROWS_ONLY="baseline,concat-cd", ROWS_STEPS="2", REPORT_START="30",
                          THROUGHPUT=str(measured))
    devroot = _write_dev(tmp_path / "devroot")
    recipe("pack", "--train", str(_docs(tmp_path / "train.jsonl", 4)),
           "--dev", str(devroot / "friends_dev.jsonl"), "--devroot", str(devroot))
    first = tmp_path / "OUT1"
    done = recipe("session-rows", str(first), "--ctxpro-limit", "4", "--beam", "2",
                  check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "report:" in done.stdout
    for row in ("baseline", "concat-cd"):  # the measured speed options, each row alike
        command = (tmp_path / "device" / "runs" / f"{row}.sh").read_text()
        assert "--adam-impl fused --log-every 100" in command
    second = tmp_path / "OUT2"
    finished = recipe("finish-report", str(second), "300", check=False)
    assert "report: complete" in finished.stdout, finished.stdout[-3000:]
    report = json.loads((second / "dev_report.json").read_text())["models"]
    assert {Path(k).name for k in report} == {"baseline", "concat-cd"}
    assert set(json.loads((second / "metrics.json").read_text())) == {"baseline", "concat-cd"}


def test_films_times_the_app_over_the_carried_dev_films(tmp_path):
    """Stage 4 (`films`): the app's batch translate over the pack's dev films, with and
    without context, as bench/film_batch.py writes it."""
    from tests.helpers import build_tiny_bundle
    from tests.test_end_to_end import _write_dev

    recipe = _runner(tmp_path, timeout=300, FILMS_DEVICE="cpu", OMP_NUM_THREADS="1")
    devroot = _write_dev(tmp_path / "devroot")
    recipe("pack", "--train", str(_docs(tmp_path / "train.jsonl", 1)),
           "--dev", str(devroot / "friends_dev.jsonl"), "--devroot", str(devroot))
    recipe("prepare")
    out = tmp_path / "OUT"
    out.mkdir()
    done = recipe("films", str(out), str(build_tiny_bundle(tmp_path / "tiny")), check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    rows = json.loads((out / "film_batch.json").read_text())["rows"]
    assert [r["setting"] for r in rows] == ["context (as the app runs)", "--context 0"]
    assert all(r["written"] == r["films"] > 0 and r["cues/s"] > 0 for r in rows)
