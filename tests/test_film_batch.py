"""bench/film_batch.py: dev documents become films with their own timings, and the app
translates the batch with and without context (the stage-4 measure of the model campaign,
run on the GPU machine as here)."""

import json
import subprocess
import sys
from pathlib import Path

from subctx.formats.srt import parse_srt_text
from tests.helpers import CORPUS, build_tiny_bundle

ROOT = Path(__file__).resolve().parent.parent


def test_dev_documents_become_films_the_app_translates_with_and_without_context(tmp_path):
    data = tmp_path / "dev.jsonl"
    with open(data, "w", encoding="utf-8") as handle:
        for d in range(2):
            segments = [{"src": s, "tgt": t, "start": 2.5 * i + 0.25, "end": 2.5 * i + 2}
                        for i, (s, t) in enumerate(CORPUS)]
            handle.write(json.dumps({"doc": f"friends/{d}", "domain": "subtitles",
                                     "segments": segments}, ensure_ascii=False) + "\n")
    bundle = build_tiny_bundle(tmp_path / "tiny")
    out = tmp_path / "rows.json"
    done = subprocess.run([sys.executable, str(ROOT / "bench/film_batch.py"), "--data",
                           str(data), "--model", str(bundle), "--threads", "1", "--json",
                           str(out), "--also", "--batch-size 2", "--rounds", "2"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = json.loads(out.read_text())["rows"]
    assert [r["setting"] for r in rows] == ["context (as the app runs)",
                                            "context, --batch-size 2", "--context 0"]
    assert all(r["rounds"] == 2 for r in rows)
    assert all(r["films"] == 2 and r["written"] == 2 and r["cues"] == 2 * len(CORPUS)
               for r in rows)
    assert rows[-1]["x no context"] == 1.0 and all(r["cues/s"] > 0 for r in rows)
    assert any("cues/s" in line for line in rows[0]["said"])  # the app's own count


def test_a_film_keeps_each_segments_timing_or_gets_spoken_ones(tmp_path):
    sys.path.insert(0, str(ROOT / "bench"))
    from film_batch import films_from_documents

    data = tmp_path / "dev.jsonl"
    timed = [{"src": "Hello.", "tgt": "Привет.", "start": 3661.5, "end": 3663.25}]
    untimed = [{"src": "One.", "tgt": "Раз."}, {"src": "Two.", "tgt": "Два."}]
    data.write_text("\n".join(json.dumps({"doc": f"a/{n}", "domain": "subtitles",
                                           "segments": s}) for n, s in enumerate([timed,
                                                                                untimed])))
    assert films_from_documents(data, tmp_path, limit=100) == 3
    [cue] = parse_srt_text((tmp_path / "film000.en.srt").read_text()).cues
    assert (cue.start, cue.end) == (3661.5, 3663.25) and cue.text == "Hello."
    cues = parse_srt_text((tmp_path / "film001.en.srt").read_text()).cues
    assert [(c.start, c.end, c.text) for c in cues] == [(0.0, 1.0, "One."), (1.25, 2.25, "Two.")]
