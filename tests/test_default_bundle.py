"""The embedded default model: it loads, its manifest is what the engine expects, and it
translates the sample film into Russian."""

import re

from typer.testing import CliRunner

from subctx.bundle import FORMAT_VERSION, default_bundle_path, load_bundle
from subctx.cli import app
from subctx.formats import read_subtitles

SAMPLE = default_bundle_path().parent.parent / "samples" / "sample.srt"


def test_manifest_matches_the_engine():
    bundle = load_bundle(default_bundle_path())
    m = bundle.manifest
    assert m.format_version == FORMAT_VERSION and m.backend == "ctranslate2"
    assert (m.source_lang, m.target_lang) == ("en", "ru")
    assert m.context.max_k >= 1 and m.context.default_k == 1 and m.context.max_gap == 7.0
    assert m.context.target_side == "prefix"
    assert {"context=1", "context=0"} <= set(m.scores)
    size = sum(p.stat().st_size for p in bundle.path.iterdir())
    assert size <= 60 * 2**20
    assert "Dev scores" in (bundle.path / "README.md").read_text(encoding="utf-8")


def test_sample_translates_to_russian(tmp_path):
    out = tmp_path / "sample.ru.srt"
    result = CliRunner().invoke(app, ["translate", str(SAMPLE), "-o", str(out),
                                      "--device", "cpu"])
    assert result.exit_code == 0, result.output
    source, translated = read_subtitles(SAMPLE), read_subtitles(out)
    assert [c.timing for c in translated.cues] == [c.timing for c in source.cues]
    text = " ".join(" ".join(c.lines) for c in translated.cues)
    cyrillic = len(re.findall(r"[а-яё]", text, re.IGNORECASE))
    latin = len(re.findall(r"[a-z]", re.sub(r"<[^>]+>", "", text), re.IGNORECASE))
    assert cyrillic > 5 * latin
    assert translated.cues[3].lines[0].startswith("[")  # the sound cue keeps its brackets


CONTROLS_BUNDLE = default_bundle_path().parent / "en-ru-controls"


def test_the_controls_bundle_obeys_its_tags(tmp_path):
    """assets/models/en-ru-controls (the embedded model fine-tuned with control tags): the
    register and the speaker's gender asked come out in the forms of the lines that show them."""
    from subctx import lexicon
    from subctx.controls import FORMALITY, SPEAKER_GENDER

    assert load_bundle(CONTROLS_BUNDLE).manifest.controls == [FORMALITY, SPEAKER_GENDER]
    film = tmp_path / "film.srt"
    film.write_text("1\n00:00:01,000 --> 00:00:02,500\nCan you help me?\n\n"
                    "2\n00:00:03,000 --> 00:00:04,500\nI was sure you saw it.\n",
                    encoding="utf-8")
    for formality, gender, register, sure in [("informal", "feminine", lexicon.INFORMAL,
                                               "уверена"),
                                              ("formal", "masculine", lexicon.FORMAL, "уверен")]:
        out = tmp_path / f"{formality}.srt"
        result = CliRunner().invoke(app, ["translate", str(film), "--model", str(CONTROLS_BUNDLE),
                                          "--formality", formality, "--speaker-gender", gender,
                                          "-o", str(out), "--threads", "1"])
        assert result.exit_code == 0, result.output
        first, second = (" ".join(c.lines) for c in read_subtitles(out).cues)
        assert lexicon.register(first) == register, first
        assert sure in lexicon.words(second), second
