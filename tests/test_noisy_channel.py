"""bench/noisy_channel.py: the n-best rescored by a second model, a row per λ and file."""

import json
import subprocess
import sys
from pathlib import Path

from tests.helpers import CORPUS, build_tiny_bundle

ROOT = Path(__file__).resolve().parent.parent


def test_every_lambda_gets_a_row_with_scores_and_times(tmp_path):
    data = tmp_path / "dev.jsonl"
    data.write_text(json.dumps({"doc": "d", "segments": [{"src": s, "tgt": t}
                                                           for s, t in CORPUS]},
                               ensure_ascii=False) + "\n", encoding="utf-8")
    bundle = build_tiny_bundle(tmp_path / "tiny")  # stands in for both directions
    out = tmp_path / "rows.json"
    done = subprocess.run([sys.executable, str(ROOT / "bench/noisy_channel.py"), "--model",
                           str(bundle), "--channel", str(bundle), "--data", str(data),
                           "--limit", "4", "--beam", "2", "--lambdas", "0,1", "--threads", "1",
                           "--json", str(out)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = json.loads(out.read_text())["rows"]
    assert [r["lambda"] for r in rows] == [0.0, 1.0]
    assert all(r["sentences"] == 4 and r["chrf"] >= 0 and r["decode_s"] >= 0 for r in rows)
