"""How much English alone tells of ты/вы (subctx_train.register_fit): the features, fitting
on documents, the report and what asking for вы could mend or break."""

import json

import pytest
from typer.testing import CliRunner

from subctx import lexicon
from subctx_train.cli import app
from subctx_train.data import Document, Segment, write_jsonl
from subctx_train.evaluate import CtxproItem
from subctx_train.register_fit import (
    BIAS,
    RegisterCues,
    accuracy,
    ctxpro_examples,
    examples,
    features,
    fit,
    headroom,
    report_row,
)

CUES = RegisterCues({BIAS: -0.5, "w:sir": 3.0, "t:mr": 2.0, "w:mom": -2.0, "p:sir": 1.0,
                     "carry:вы": 1.5, "carry:ты": -1.5})



def test_features_name_the_line_its_title_the_lines_before_and_the_carried_register():
    feats = features("Thank you, Mr. Kane!", ["Thank you, sir.", "Hi."], lexicon.FORMAL)
    assert {"w:thank", "w:you", "w:mr", "w:kane", "w:!"} <= set(feats)
    assert {"b:<s>_thank", "b:thank_you", "b:!_</s>", "t:mr"} <= set(feats)
    # the previous lines' words, those the line itself has left out
    assert "p:sir" in feats and "p:hi" in feats and "p:thank" not in feats
    assert feats[-1] == "carry:вы"
    assert features("Hi.")[-1] == "carry:-"
    assert features("Don't.") == ["w:don't", "b:<s>_don't", "b:don't_</s>", "carry:-"]


def test_the_weights_file_lists_the_heaviest_cues_first(tmp_path):
    path = tmp_path / "cues.tsv"
    CUES.write(path)
    lines = path.read_text().splitlines()
    assert lines[0] == "w:sir\t3.0000" and len(lines) == len(CUES.weights)
    assert CUES.logit(features("Yes, sir.")) == pytest.approx(2.5)


def test_headroom_counts_the_lines_a_tag_could_mend_or_break():
    items = [CtxproItem("NOM.FORM+PLUR", "вы", ["Yes, sir."]),  # the model said ты: mendable
             CtxproItem("NOM.FORM+PLUR", "вы", ["Good day, sir."]),  # it said вы already
             CtxproItem("NOM.INFORM.SING", "ты", ["Thanks, sir."]),  # ты right: would break
             CtxproItem("NOM.INFORM.SING", "ты", ["Hi, mom."])]  # not asked
    rows = headroom(CUES, items, ["Да, ты прав.", "Добрый день, как вы?", "Спасибо, ты лучший.",
                                  "Привет, ты как?"], probabilities=(0.5,))
    assert rows == [{"вы asked where p >": 0.5, "lines": 3, "could mend": 1, "would break": 1,
                     "already вы": 1}]


# -- fitting ---------------------------------------------------------------------------------
def _scene(english: list[str], russian: list[str], n: int) -> Document:
    return Document(f"tiny/{n}", [Segment(e, r) for e, r in zip(english, russian, strict=True)])


def _docs() -> list[Document]:
    docs = []
    for n in range(60):
        docs.append(_scene(["Good morning, sir. How are you?", "Can I help you?"],
                           ["Доброе утро, сэр. Как вы?", "Я могу вам помочь?"], 2 * n))
        docs.append(_scene(["Hey, dude. How are you?", "Can I help you?"],
                           ["Привет, чувак. Как ты?", "Я могу тебе помочь?"], 2 * n + 1))
    return docs


def test_examples_carry_the_register_of_the_reference_before():
    [first, second] = list(examples(_docs()[:1]))
    assert first.formal and second.formal
    assert "carry:-" in first.features and "carry:вы" in second.features
    assert "p:sir" in second.features
    hidden = list(examples(_docs()[:1], carry_dropout=1.0))
    assert all("carry:-" in ex.features for ex in hidden)


def test_fitting_learns_the_words_and_the_carry_that_tell_the_registers_apart():
    train = list(examples(_docs()))
    cues = fit(train, min_count=2, epochs=5, lr=0.1)
    assert accuracy(cues, train) == 1.0
    assert cues.weights["w:sir"] > 0 > cues.weights["w:dude"]
    assert cues.weights["carry:вы"] > 0 > cues.weights["carry:ты"]
    assert "w:only-once" not in cues.weights
    row = report_row("train", cues, train, margin=0.25)
    assert row["accuracy"] == 1.0 and row["вы share"] == 0.5
    assert row["вы said: right"].startswith("1.000 of ")
    items = [CtxproItem("NOM.FORM+PLUR", "вы", ["Good morning, sir.", "Can I help you?"]),
             CtxproItem("NOM.INFORM.SING", "ты", ["Hey, dude!", "Can I help you?"])]
    assert accuracy(cues, ctxpro_examples(items)) == 1.0


def test_register_cues_command_fits_writes_and_reports(tmp_path):
    data = tmp_path / "train"
    data.mkdir()
    with open(data / "tiny.jsonl", "w", encoding="utf-8") as handle:
        write_jsonl(_docs(), handle)
    with open(data / "left_out.jsonl", "w", encoding="utf-8") as handle:
        write_jsonl([_scene(["Only once."], ["Ты тут."], 0)] * 5, handle)
    out = tmp_path / "cues.tsv"
    result = CliRunner().invoke(app, ["register-cues", str(data), "--out", str(out),
                                      "--exclude", "left_out.jsonl", "--held", "10",
                                      "--min-count", "2", "--epochs", "3",
                                      "--json", str(tmp_path / "report.json")])
    assert result.exit_code == 0, result.output
    weights = dict(line.split("\t") for line in out.read_text().splitlines())
    assert float(weights["w:sir"]) > 0 and "w:once" not in weights
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["examples"] == 230 and report["weights"] == len(weights)
    assert report["rows"][0]["examples"] == "held out of training"
    assert report["rows"][0]["n"] == 10
