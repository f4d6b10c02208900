"""`subctx translate` end to end with a tiny real bundle."""

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from subctx.cli import app
from subctx.formats import read_subtitles
from tests.helpers import write_srt

FILM = """1
00:00:01,000 --> 00:00:03,000
<i>Hello there,
how are you?</i>

2
00:00:03,500 --> 00:00:05,000
- Where is the door?
- Thank you very much.

3
00:00:20,000 --> 00:00:22,000
[door slams]
"""


@pytest.fixture
def run(tiny_bundle):
    runner = CliRunner()

    def invoke(*args, model=True):
        extra = ["--model", str(tiny_bundle), "--device", "cpu"] if model else []
        return runner.invoke(app, ["translate", *map(str, args), *extra], env={"COLUMNS": "250"})

    return invoke


def test_single_file_keeps_timings_tags_and_dialogue(tmp_path, run):
    src = write_srt(tmp_path / "movie.srt", FILM, "cp1251", "\r\n")
    before = src.read_bytes()
    result = run(src)
    assert result.exit_code == 0, result.output
    out = tmp_path / "movie.ru.srt"
    assert src.read_bytes() == before
    sub, orig = read_subtitles(out), read_subtitles(src)
    assert [c.timing for c in sub.cues] == [c.timing for c in orig.cues]
    assert sub.newline == "\r\n" and sub.encoding == "utf-8"
    assert sub.cues[0].lines[0].startswith("<i>") and sub.cues[0].lines[-1].endswith("</i>")
    assert [line[:2] for line in sub.cues[1].lines] == ["- ", "- "]
    assert sub.cues[2].lines[0].startswith("[") and sub.cues[2].lines[0].endswith("]")
    assert "1 translated" in result.output
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".part")]


def test_output_file_and_dry_run(tmp_path, run):
    src = write_srt(tmp_path / "movie.en.srt", FILM)
    result = run(src, "--dry-run")
    assert result.exit_code == 0 and "movie.ru.srt" in result.output
    assert not (tmp_path / "movie.ru.srt").exists()
    result = run(src, "-o", tmp_path / "custom.srt", "--context", "0", "--beam", "1")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "custom.srt").exists()


def test_folder_batch_recursive_mirror_skip_and_overwrite(tmp_path, run):
    root = tmp_path / "show"
    write_srt(root / "s1" / "e1.srt", FILM) if (root / "s1").mkdir(parents=True) is None else 0
    write_srt(root / "e0.srt", FILM)
    write_srt(root / "done.ru.srt", FILM)  # an output: never re-translated
    result = run(root)
    assert result.exit_code == 0, result.output
    assert (root / "e0.ru.srt").exists() and not (root / "s1" / "e1.ru.srt").exists()
    assert not (root / "done.ru.ru.srt").exists()
    out = tmp_path / "out"
    result = run(root, "--recursive", "-o", out)
    assert result.exit_code == 0, result.output
    assert (out / "e0.ru.srt").exists() and (out / "s1" / "e1.ru.srt").exists()
    stamp = os.stat(out / "e0.ru.srt").st_mtime_ns
    result = run(root, "--recursive", "-o", out)
    assert result.exit_code == 0 and "exists (use --overwrite)" in result.output
    assert os.stat(out / "e0.ru.srt").st_mtime_ns == stamp
    later = os.stat(out / "e0.ru.srt").st_mtime + 10
    os.utime(root / "e0.srt", (later, later))  # the input changed after its translation
    result = run(root, "--recursive", "-o", out)
    assert "older than its input" in " ".join(result.output.split())
    result = run(root, "-r", "-o", out, "--overwrite")
    assert result.exit_code == 0 and "2 translated" in result.output


def test_batch_goes_on_past_bad_files_and_lists_them(tmp_path, run):
    write_srt(tmp_path / "good.srt", FILM)
    (tmp_path / "empty.srt").write_bytes(b"")
    (tmp_path / "junk.srt").write_bytes(os.urandom(3000))
    (tmp_path / "notes.srt").write_text("just notes, no timings\n")
    result = run(tmp_path)
    assert result.exit_code == 1
    assert (tmp_path / "good.ru.srt").exists()
    for name in ("empty.srt: empty file", "junk.srt: binary", "notes.srt: not a subtitle file"):
        assert name in result.output
    assert "3 failure(s)" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("setup,message", [
    (lambda d: d / "missing.srt", "no such file or folder"),
    (lambda d: (d / "emptydir").mkdir() or d / "emptydir", "no subtitle files to translate"),
    (lambda d: write_srt(d / "x.ru.srt", FILM), "is itself a .ru.srt translation"),
])
def test_bad_paths(tmp_path, run, setup, message):
    result = run(setup(tmp_path))
    assert message in result.output and "Traceback" not in result.output


def test_output_never_overwrites_the_input(tmp_path, run):
    src = write_srt(tmp_path / "movie.srt", FILM)
    before = src.read_bytes()
    result = run(src, "-o", src)
    assert result.exit_code == 1 and "overwrite the input" in result.output
    assert src.read_bytes() == before


def test_warnings_for_odd_cues_but_cues_kept(tmp_path, run):
    odd = FILM + "\n4\n00:00:23,000 --> 00:00:24,000\n\n5\n00:00:25,000 --> bad\n" \
        + ("Very long sentence here. " * 500) + "\n"
    src = write_srt(tmp_path / "odd.srt", odd)
    result = run(src)
    assert result.exit_code == 0, result.output
    assert "empty" in result.output and "malformed timestamp" in result.output
    assert "pieces" in result.output
    assert len(read_subtitles(tmp_path / "odd.ru.srt").cues) == 5


def test_model_folder_that_is_not_a_bundle(tmp_path, run):
    src = write_srt(tmp_path / "movie.srt", FILM)
    result = CliRunner().invoke(app, ["translate", str(src), "--model", str(tmp_path)])
    assert result.exit_code == 1
    assert "not a subctx model bundle" in result.output
    assert not (tmp_path / "movie.ru.srt").exists()


def test_a_wrong_subctx_model_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("SUBCTX_MODEL", str(tmp_path / "nowhere"))
    src = write_srt(tmp_path / "movie.srt", FILM)
    result = CliRunner().invoke(app, ["translate", str(src)])
    assert result.exit_code == 1 and "$SUBCTX_MODEL" in result.output
    assert "model folder not found" in result.output


def test_more_threads_than_cores_are_cut_to_the_cores(tmp_path, run):
    src = write_srt(tmp_path / "movie.srt", FILM)
    result = run(src, "--threads", 100_000, "--context", 0)
    assert result.exit_code == 0
    assert f"using {os.cpu_count()}" in " ".join(result.output.split())


def test_help_shows_examples():
    result = CliRunner().invoke(app, ["translate", "--help"])
    assert result.exit_code == 0 and "Examples" in result.output and "--recursive" in result.output


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o027, 0o640)])
def test_outputs_respect_the_umask(tmp_path, run, umask, mode):
    src = write_srt(tmp_path / "movie.srt", FILM)
    old = os.umask(umask)
    try:
        result = run(src)
    finally:
        os.umask(old)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "movie.ru.srt").stat().st_mode & 0o777 == mode


def test_output_must_be_a_folder_for_several_inputs(tmp_path, run):
    a = write_srt(tmp_path / "a.srt", FILM)
    b = write_srt(tmp_path / "b.srt", FILM)
    result = run(a, b, "-o", tmp_path / "one.srt")
    assert result.exit_code == 1 and "must be a folder" in result.output
    assert not (tmp_path / "one.srt").exists()
    (tmp_path / "file").write_text("x")
    result = run(tmp_path, "-o", tmp_path / "file")
    assert result.exit_code == 1 and "must be a folder" in result.output


def test_bad_options_are_reported_before_any_input_is_read(tmp_path, run):
    junk = tmp_path / "junk.srt"
    junk.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    for args, valid in [(["--device", "tpu"], "'auto', 'cpu', 'cuda'"),
                        (["--compute-type", "int3"], "'int8'"),
                        (["--schedule", "batched"], "'blocks', 'sequential'"),
                        (["--context-scope", "some"], "'all', 'agreement'")]:
        result = CliRunner().invoke(app, ["translate", str(junk), *args],
                                    env={"COLUMNS": "200"})
        assert result.exit_code == 2  # a usage error, naming the valid choices
        assert f"Invalid value for '{args[0]}'" in result.output and valid in result.output
        assert "junk.srt" not in result.output  # the input was not even looked at
    result = CliRunner().invoke(app, ["translate", str(junk), "--model", str(tmp_path)])
    assert result.exit_code == 1 and "not a subctx model bundle" in result.output
    assert "junk.srt" not in result.output


def test_version_help_and_info():
    runner = CliRunner()
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.startswith("subctx ")
    help_text = runner.invoke(app, ["translate", "--help"], env={"COLUMNS": "120"}).output
    assert "<bool>" not in help_text and "<str>" not in help_text and "--no-guard" in help_text
    assert "<list" not in help_text and "--context-scope" in help_text
    assert "auto|cpu|cuda" in help_text and "blocks|sequential" in help_text
    review_help = runner.invoke(app, ["review", "--help"], env={"COLUMNS": "120"}).output
    for option in ("--compute-type", "--threads", "--context-scope", "--guard"):
        assert option in review_help  # the review decodes as translate does
    info = runner.invoke(app, ["info"], env={"COLUMNS": "80"})
    assert info.exit_code == 0 and "friends_dev chrF" in info.output
    assert "context may change:" in info.output
    assert len(info.output.splitlines()) < 30
    raw = runner.invoke(app, ["info", "--json"])
    assert raw.exit_code == 0 and '"architecture"' in raw.output


def test_info_takes_model_as_translate_does_and_checks_the_files(tmp_path, tiny_bundle):
    import shutil

    runner = CliRunner()
    shown = runner.invoke(app, ["info", "--model", str(tiny_bundle)])
    assert shown.exit_code == 0 and str(tiny_bundle) in shown.output
    broken = tmp_path / "broken"
    shutil.copytree(tiny_bundle, broken)
    model_file = next(p for p in broken.iterdir()
                      if p.name not in ("subctx.json", "README.md") and "spm" not in p.name)
    model_file.unlink()
    result = runner.invoke(app, ["info", str(broken)])
    assert result.exit_code == 1 and "incomplete bundle" in result.output


def test_review_names_the_missing_translation_not_the_input(tmp_path):
    src = write_srt(tmp_path / "movie.srt", FILM)
    result = CliRunner().invoke(app, ["review", str(src), "--translation",
                                      str(tmp_path / "nope.ru.srt")])
    assert result.exit_code == 1 and "nope.ru.srt: no such file" in result.output
    assert "movie.srt: no such file" not in result.output


def test_reading_speed_fit_shortens_what_it_can_and_the_summary_lists_the_rest(tmp_path, run,
                                                                              monkeypatch):
    import re

    from subctx.reading import ReadingFit

    # whatever the tiny random model writes: the fit only ever shortens cues that were over,
    # the summary counts them, and the cue shown for 28 s is never over
    monkeypatch.setattr("subctx.cli.DEFAULT_FIT", ReadingFit(hypotheses=6))
    src = write_srt(tmp_path / "fast.srt", "".join(
        f"{i}\n00:00:{a} --> 00:00:{b}\n{text}\n\n" for i, (a, b, text) in enumerate([
            ("00,000", "00,600", "Hello there, how are you?"),
            ("01,000", "01,400", "I do not know what you mean."),
            ("02,000", "30,000", "Where is the door?"),
            ("30,000", "30,400", "She said it was fine.")], 1)))
    out = tmp_path / "fast.ru.srt"

    def over(output: str) -> set[int]:
        listed = re.search(r"over 40 characters per second: ([\d, ]+)", output)
        return {int(n) for n in listed.group(1).split(",")} if listed else set()

    result = run(src, "--max-cps", "40")
    assert result.exit_code == 0, result.output
    fitted, still = read_subtitles(out), over(result.output)
    shortened = int(re.search(r"1 translated[│ ]+4[│ ]+0[│ ]+\d+[│ ]+(\d+)",
                              result.output).group(1))
    result = run(src, "--max-cps", "40", "--overwrite", "--no-fit-reading-speed")
    assert result.exit_code == 0, result.output
    plain, before = read_subtitles(out), over(result.output)
    assert 3 not in before and still <= before and shortened == len(before - still)
    changed = 0
    for n in range(4):
        a, b = " ".join(fitted.cues[n].lines), " ".join(plain.cues[n].lines)
        assert a == b or (n + 1 in before and len(a) < len(b))
        changed += a != b
    assert changed >= shortened  # a shortened cue that now fits is one that changed


def test_control_options_need_a_model_trained_with_them(tmp_path, run, tiny_bundle):
    """The tiny bundle lists no control tags: --formality / --speaker-gender other than auto
    are refused in one line before any input is read; a bundle that lists them gets them."""
    import json
    import shutil

    from subctx.batch import ModelChoice

    src = write_srt(tmp_path / "movie.srt", FILM)
    for option, value in (("--formality", "formal"), ("--speaker-gender", "feminine")):
        result = run(src, option, value)
        assert result.exit_code == 1 and "was not trained with" in result.output
        assert "Traceback" not in result.output and not (tmp_path / "movie.ru.srt").exists()
    tagged = tmp_path / "tagged"
    shutil.copytree(tiny_bundle, tagged)
    manifest = json.loads((tagged / "subctx.json").read_text())
    (tagged / "subctx.json").write_text(json.dumps({**manifest, "controls": ["formality"]}))
    choice = ModelChoice(model=tagged, formality="formal")
    assert choice.options(choice.bundle()).controls == ("<frm>",)
    assert run(src, "--formality", "informal", model=False).exit_code == 1  # embedded: none
    result = CliRunner().invoke(app, ["translate", str(src), "--model", str(tagged),
                                      "--device", "cpu", "--formality", "informal"])
    assert result.exit_code == 0, result.output



def test_batch_size_reaches_the_backend_and_the_schedule(tmp_path, run, tiny_bundle,
                                                         monkeypatch):
    """--batch-size sets how many requests each search takes (the backend's default for every
    call) and how many blocks the schedule advances side by side; the film comes out as with
    the default."""
    from subctx.backends.ct2 import CTranslate2Backend
    from subctx.batch import ModelChoice

    choice = ModelChoice(model=tiny_bundle, device="cpu", batch_size=3)
    assert choice.options(choice.bundle()).batch_size == 3
    assert choice.translator(choice.bundle()).batch_size == 3
    src = write_srt(tmp_path / "movie.srt", FILM)
    assert run(src).exit_code == 0
    default = (tmp_path / "movie.ru.srt").read_text(encoding="utf-8")
    sizes: list[int] = []
    search = CTranslate2Backend._search

    def spy(self, batch, beam, num_hypotheses, attention, max_batch_size):
        sizes.append(max_batch_size)
        return search(self, batch, beam, num_hypotheses, attention, max_batch_size)

    monkeypatch.setattr(CTranslate2Backend, "_search", spy)
    result = run(src, "--batch-size", "1", "--overwrite")
    assert result.exit_code == 0, result.output
    assert sizes and set(sizes) == {1}
    assert (tmp_path / "movie.ru.srt").read_text(encoding="utf-8") == default


SHORT = "1\n00:00:01,000 --> 00:00:02,000\nWhere is the door?\n"


def test_two_inputs_with_one_output_the_first_keeps_it_the_second_fails(tmp_path, run):
    """movie.en.srt and movie.srt both make movie.ru.srt: the first (in order) is translated,
    the other fails naming it (also under --dry-run) and nothing is overwritten."""
    folder = tmp_path / "c"
    folder.mkdir()
    write_srt(folder / "movie.en.srt", FILM)
    write_srt(folder / "movie.srt", SHORT)
    clash = "movie.srt: not translated: its output"
    result = run(folder, "--dry-run")
    assert result.exit_code == 1 and clash in result.output and "1 failure(s)" in result.output
    assert not (folder / "movie.ru.srt").exists()
    result = run(folder)
    assert result.exit_code == 1, result.output
    assert "1 translated" in result.output and clash in result.output
    assert f"is also that of {folder / 'movie.en.srt'}" in result.output
    out = read_subtitles(folder / "movie.ru.srt")
    assert [c.timing for c in out.cues] == [c.timing for c in read_subtitles(
        folder / "movie.en.srt").cues]  # the first input's translation, whole
    assert "Traceback" not in result.output


def test_same_name_from_two_folders_into_one_output_folder(tmp_path, run):
    one, two = tmp_path / "d1", tmp_path / "d2"
    one.mkdir(), two.mkdir()
    write_srt(one / "x.srt", FILM)
    write_srt(two / "x.srt", SHORT)
    out = tmp_path / "out"
    for args in ([one / "x.srt", two / "x.srt", "-o", f"{out}/"], [one, two, "-r", "-o", out]):
        result = run(*args, "--overwrite")
        assert result.exit_code == 1, result.output
        assert "1 translated" in result.output
        assert f"{two / 'x.srt'}: not translated: its output {out / 'x.ru.srt'} is also that " \
               f"of {one / 'x.srt'}" in result.output
        assert len(read_subtitles(out / "x.ru.srt").cues) == 3  # d1's, never replaced by d2's


def test_one_input_output_must_be_its_format_or_a_folder(tmp_path, run):
    src = write_srt(tmp_path / "a.srt", SHORT)
    result = run(src, "-o", tmp_path / "a.ru.vtt")
    assert result.exit_code == 1 and "a.srt is SRT, not VTT" in result.output
    assert "written in its input's own format" in result.output
    assert f"name the output {tmp_path / 'a.ru.srt'}" in result.output
    assert not (tmp_path / "a.ru.vtt").exists() and not (tmp_path / "a.ru.srt").exists()
    result = run(src, "-o", tmp_path / "result.txt")
    assert result.exit_code == 1 and "neither a subtitle file name" in result.output
    assert f"end it with / ({tmp_path / 'result.txt'}/)" in result.output
    assert not (tmp_path / "result.txt").exists() and "Traceback" not in result.output
    # what works: a folder ending in /, created; an existing folder; a name of its format
    (tmp_path / "taken").mkdir()
    for output, written in [(f"{tmp_path / 'result.txt'}/", tmp_path / "result.txt" / "a.ru.srt"),
                            (tmp_path / "taken", tmp_path / "taken" / "a.ru.srt"),
                            (tmp_path / "x.ru.srt", tmp_path / "x.ru.srt")]:
        result = run(src, "-o", output, "--context", "0", "--beam", "1")
        assert result.exit_code == 0, result.output
        assert read_subtitles(written).format == "srt"


@pytest.mark.parametrize("name, says", [("foo", "unknown encoding 'foo'"),
                                        ("rot13", "'rot13' is not a text encoding")])
def test_unknown_encoding_is_an_option_error_before_any_input_is_read(tmp_path, run, name,
                                                                      says):
    good = write_srt(tmp_path / "good.srt", SHORT)
    for args in ([good], [good, "--dry-run"], [tmp_path / "missing.srt"]):
        result = run(*args, "--encoding", name)
        assert result.exit_code == 2, result.output
        assert "Invalid value for '--encoding'" in result.output and says in result.output
        assert "srt" not in result.output.replace(str(tmp_path), "")  # no input was looked at
        assert "dry-run" not in result.output and "Traceback" not in result.output
    result = run(good, "--encoding", "cp1251", "--dry-run")
    assert result.exit_code == 0 and "cp1251" in result.output


def test_unwritable_output_fails_before_translating_and_the_batch_goes_on(tmp_path, run,
                                                                          monkeypatch):
    import subctx.cli

    locked, free = tmp_path / "locked", tmp_path / "free"
    locked.mkdir(), free.mkdir()
    a = write_srt(locked / "a.srt", FILM)
    b = write_srt(free / "b.srt", FILM)
    access = os.access
    # as root os.access allows everything: say `locked` is read-only as it would be
    monkeypatch.setattr(os, "access", lambda path, mode, **kw: (
        Path(path) != locked and access(path, mode, **kw)))
    said = f"{a}: cannot write its output {locked / 'a.ru.srt'}: no permission to write in " \
           f"{locked}"
    result = run(a, b, "--dry-run")
    assert result.exit_code == 1 and said in result.output
    assert str(free / "b.ru.srt") in result.output  # the other one would be written
    read: list = []
    load = subctx.cli.load
    monkeypatch.setattr(subctx.cli, "load", lambda jobs, enc: read.extend(jobs) or load(jobs, enc))
    result = run(a, b)
    assert result.exit_code == 1 and said in result.output and "1 translated" in result.output
    assert [j.source for j in read] == [b]  # a was never read, let alone translated
    assert (free / "b.ru.srt").exists() and not (locked / "a.ru.srt").exists()
    blocker = write_srt(tmp_path / "some_file.srt", SHORT)
    result = run(b, "-o", f"{blocker}/sub/", "--overwrite")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert f"cannot create the folder {blocker / 'sub'} for its output: {blocker} is a file" \
           in result.output


def test_a_device_the_machine_lacks_is_said_before_any_input_is_read(tmp_path, tiny_bundle):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    junk = tmp_path / "junk.srt"
    junk.write_bytes(b"\x00\x01 not subtitles")
    result = CliRunner().invoke(app, ["translate", str(junk), "--model", str(tiny_bundle),
                                      "--device", "cuda", "--dry-run"])
    assert result.exit_code == 1 and "cuda" in result.output.lower()
    assert "junk.srt" not in result.output  # the input was not read
