"""The training curves of a run (training.png), drawn from its metrics.jsonl."""

from __future__ import annotations

import json
from pathlib import Path


def plot_metrics(metrics_path: Path, out_png: Path) -> Path | None:
    """Loss and accuracy curves (train vs dev) as a PNG."""
    if not metrics_path.exists():
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    records = [json.loads(line) for line in metrics_path.read_text().splitlines() if line.strip()]
    if not records:
        return None
    steps = [r["step"] for r in records]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    ax1.plot(steps, [r["nll"] for r in records], label="train NLL")
    if "dev_nll" in records[-1]:
        ax1.plot(steps, [r.get("dev_nll", float("nan")) for r in records], label="dev NLL")
    ax1.set_xlabel("step")
    ax1.set_ylabel("NLL per token (current sentence)")
    ax1.legend()
    ax2.plot(steps, [r["acc"] for r in records], label="train accuracy")
    if "dev_acc" in records[-1]:
        ax2.plot(steps, [r.get("dev_acc", float("nan")) for r in records], label="dev accuracy")
    ax2.set_xlabel("step")
    ax2.set_ylabel("token accuracy")
    ax2.legend()
    fig.tight_layout()
    fig.savefig(out_png, dpi=100)
    plt.close(fig)
    return out_png
