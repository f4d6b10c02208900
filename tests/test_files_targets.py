"""Where translations go (subctx.files.select_jobs), decided before any input is read: two
inputs never share an output, `-o` names a file only in its input's format, and an output that
cannot be written is known before any work on it."""

import os
from pathlib import Path

import pytest

from subctx.batch import load
from subctx.files import OutputError, select_jobs
from tests.helpers import write_srt

CUE = "1\n00:00:01,000 --> 00:00:02,000\nHello.\n"


def _outputs(selection) -> list[tuple[str, str]]:
    return [(j.source.name, str(j.output)) for j in selection.jobs]


def test_inputs_with_one_output_name_in_a_folder(tmp_path):
    write_srt(tmp_path / "movie.srt", CUE)
    write_srt(tmp_path / "movie.en.srt", CUE)
    selection = select_jobs([tmp_path])
    assert _outputs(selection) == [("movie.en.srt", str(tmp_path / "movie.ru.srt"))]
    [(source, reason)] = selection.failed
    assert source == tmp_path / "movie.srt"
    assert f"its output {tmp_path / 'movie.ru.srt'} is also that of " \
           f"{tmp_path / 'movie.en.srt'}" in reason


def test_same_names_from_two_folders_into_one_output(tmp_path):
    one = write_srt((tmp_path / "d1").mkdir() or tmp_path / "d1" / "x.srt", CUE)
    two = write_srt((tmp_path / "d2").mkdir() or tmp_path / "d2" / "x.srt", CUE)
    out = tmp_path / "out"
    for selection in (select_jobs([one, two], out), select_jobs([one.parent, two.parent], out,
                                                                recursive=True)):
        assert _outputs(selection) == [("x.srt", str(out / "x.ru.srt"))]
        assert selection.jobs[0].source == one
        assert [(p, one.as_posix() in r) for p, r in selection.failed] == [(two, True)]


def test_mirrored_subfolders_collide_under_recursive(tmp_path):
    root = tmp_path / "show"
    (root / "s1").mkdir(parents=True)
    write_srt(root / "s1" / "e1.srt", CUE)
    write_srt(root / "s1" / "e1.eng.srt", CUE)
    write_srt(root / "e2.srt", CUE)
    selection = select_jobs([root], tmp_path / "out", recursive=True)
    assert sorted(_outputs(selection)) == [
        ("e1.eng.srt", str(tmp_path / "out" / "s1" / "e1.ru.srt")),
        ("e2.srt", str(tmp_path / "out" / "e2.ru.srt"))]
    assert [p for p, _ in selection.failed] == [root / "s1" / "e1.srt"]


def test_outputs_compared_through_links_and_with_case(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "alias").symlink_to(real)
    a = write_srt(real / "film.srt", CUE)
    b = write_srt(real / "film.en.srt", CUE)
    # alias/film.ru.srt and real/film.ru.srt are one file: the second input fails
    selection = select_jobs([tmp_path / "alias" / "film.srt", b])
    assert [j.source for j in selection.jobs] == [tmp_path / "alias" / "film.srt"]
    assert [p for p, _ in selection.failed] == [b]
    # Film.srt's output differs from film.srt's only in case: two files here
    c = write_srt(real / "Film.srt", CUE)
    selection = select_jobs([a, c])
    assert [j.output.name for j in selection.jobs] == ["film.ru.srt", "Film.ru.srt"]
    assert not selection.failed


def test_the_same_input_twice_is_one_job_not_a_collision(tmp_path):
    a = write_srt(tmp_path / "a.srt", CUE)
    (tmp_path / "same.srt").symlink_to(a)
    selection = select_jobs([a, tmp_path, tmp_path / "same.srt"])
    assert [j.source for j in selection.jobs] == [a] and not selection.failed


@pytest.mark.parametrize("name, right", [("a.ru.vtt", "a.ru.srt"), ("a.ass", "a.srt")])
def test_one_input_output_of_another_format_is_refused(tmp_path, name, right):
    a = write_srt(tmp_path / "a.srt", CUE)
    with pytest.raises(OutputError, match="own format") as refused:
        select_jobs([a], tmp_path / name)
    assert str(tmp_path / right) in str(refused.value) and "SRT, not" in str(refused.value)


def test_one_input_output_with_no_subtitle_extension_is_refused(tmp_path):
    a = write_srt(tmp_path / "a.srt", CUE)
    for output in (tmp_path / "result.txt", str(tmp_path / "result.txt")):
        with pytest.raises(OutputError, match="neither a subtitle file name") as refused:
            select_jobs([a], output)
        assert "end it with /" in str(refused.value) and "result.srt" in str(refused.value)
    assert not (tmp_path / "result.txt").exists()
    (tmp_path / "notes").write_text("x")  # an existing file is no folder either
    with pytest.raises(OutputError, match="neither a subtitle file name"):
        select_jobs([a], tmp_path / "notes")


def test_one_input_output_folders_and_files_that_work(tmp_path):
    a = write_srt(tmp_path / "a.srt", CUE)
    ass = tmp_path / "b.ass"
    ass.write_text("[Script Info]\n", encoding="utf-8")
    (tmp_path / "taken.d").mkdir()
    (tmp_path / "dir.srt").mkdir()
    cases = [(str(tmp_path / "result.txt") + "/", tmp_path / "result.txt" / "a.ru.srt"),
             (str(tmp_path / "x.srt") + os.sep, tmp_path / "x.srt" / "a.ru.srt"),
             (tmp_path / "out", tmp_path / "out" / "a.ru.srt"),
             (tmp_path / "taken.d", tmp_path / "taken.d" / "a.ru.srt"),
             (tmp_path / "dir.srt", tmp_path / "dir.srt" / "a.ru.srt"),
             (tmp_path / "x.ru.srt", tmp_path / "x.ru.srt"),
             (tmp_path / "X.RU.SRT", tmp_path / "X.RU.SRT")]
    for output, target in cases:
        assert select_jobs([a], output).jobs[0].output == target, output
    assert select_jobs([ass], tmp_path / "b.ru.ssa").jobs[0].output.name == "b.ru.ssa"


def test_named_output_of_an_input_known_only_by_its_text(tmp_path):
    """An input under another extension is read as what its text is: the file -o names must
    be of that format, found when it is read."""
    sub = write_srt(tmp_path / "film.sub", "WEBVTT\n\n00:01.000 --> 00:02.000\nHello.\n")
    loaded, failed = load(select_jobs([sub], tmp_path / "film.ru.srt").jobs)
    assert not loaded and len(failed) == 1
    assert "is VTT, not SRT" in failed[0][1] and "film.ru.vtt" in failed[0][1]
    loaded, failed = load(select_jobs([sub], tmp_path / "film.ru.vtt").jobs)
    assert len(loaded) == 1 and not failed


def test_output_under_a_file_fails_before_any_work(tmp_path):
    a = write_srt(tmp_path / "a.srt", CUE)
    b = write_srt(tmp_path / "b.srt", CUE)
    blocker = write_srt(tmp_path / "some_file.srt", CUE)
    selection = select_jobs([a], str(blocker / "sub") + "/")
    assert not selection.jobs
    assert selection.failed == [(a, f"cannot create the folder {blocker / 'sub'} for its "
                                    f"output: {blocker} is a file")]
    selection = select_jobs([a, b], blocker / "sub" / "deeper")
    assert not selection.jobs and [p for p, _ in selection.failed] == [a, b]
    assert all(f"{blocker} is a file" in reason for _, reason in selection.failed)


def test_output_folder_without_permission_fails_the_file_and_the_batch_goes_on(
        tmp_path, monkeypatch):
    locked = tmp_path / "locked"
    free = tmp_path / "free"
    a = write_srt((locked.mkdir() or locked) / "a.srt", CUE)
    b = write_srt((free.mkdir() or free) / "b.srt", CUE)
    access = os.access
    # as root os.access allows everything: say `locked` is read-only as it would be
    monkeypatch.setattr(os, "access", lambda path, mode, **kw: (
        Path(path) != locked and access(path, mode, **kw)))
    selection = select_jobs([a, b])
    assert [j.source for j in selection.jobs] == [b]
    assert selection.failed == [(a, f"cannot write its output {locked / 'a.ru.srt'}: no "
                                    f"permission to write in {locked}")]
    selection = select_jobs([b], locked / "new" / "out")  # -o: folders to create
    assert not selection.jobs
    assert selection.failed == [(b, f"cannot create the folder {locked / 'new' / 'out'} for "
                                    f"its output: no permission to write in {locked}")]


def test_output_that_is_a_folder_is_not_skipped_as_done(tmp_path):
    a = write_srt(tmp_path / "a.srt", CUE)
    (tmp_path / "a.ru.srt").mkdir()
    selection = select_jobs([a])
    assert not selection.jobs and not selection.skipped
    assert selection.failed == [(a, f"its output {tmp_path / 'a.ru.srt'} is a folder")]
