from subctx.formats.srt import parse_srt_text
from subctx.units import plan_document, render_cue
from subctx.wrap import wrap_text


def plan(text):
    return plan_document(parse_srt_text(text))


def cue(body, n=1, start="00:00:01,000", end="00:00:02,000"):
    return f"{n}\n{start} --> {end}\n{body}\n\n"


def rendered(p, fn=str.upper, **kw):
    texts = [fn(u.text) for u in p.units]
    return [render_cue(layout, texts, **kw) for layout in p.layouts]


def test_two_line_cue_is_joined_and_rewrapped():
    p = plan(cue("I do not know what you mean,\nbut it sounds like a bad idea."))
    joined = "I do not know what you mean, but it sounds like a bad idea."
    assert [u.text for u in p.units] == [joined]
    assert rendered(p) == [["I DO NOT KNOW WHAT YOU MEAN,", "BUT IT SOUNDS LIKE A BAD IDEA."]]


def test_italic_block_and_per_line_tags_and_position_survive():
    p = plan(cue("{\\an8}<i>Hello there,\nmy old friend.</i>")
             + cue("<i>One</i>\n<i>two</i>", 2)
             + cue('<font color="#ffff00">Yellow words</font>', 3))
    assert [u.text for u in p.units] == ["Hello there, my old friend.", "One two",
                                         "Yellow words"]
    out = rendered(p)
    assert out[0] == ["{\\an8}<i>HELLO THERE, MY OLD FRIEND.</i>"]
    assert out[1] == ["<i>ONE TWO</i>"]
    assert out[2] == ['<font color="#ffff00">YELLOW WORDS</font>']


def test_inline_tags_are_dropped_with_a_warning():
    p = plan(cue("I <b>really</b> mean it."))
    assert p.units[0].text == "I really mean it."
    assert "dropped" in p.warnings[0]


def test_dialogue_turns_are_separate_units_and_keep_dashes():
    p = plan(cue("- Hi, how are\nyou doing?\n- <i>Fine.</i>") + cue("Hi.\n-Hello.", 2))
    assert [u.text for u in p.units] == ["Hi, how are you doing?", "Fine.", "Hi.", "Hello."]
    out = rendered(p)
    assert out[0] == ["- HI, HOW ARE YOU DOING?", "<i>- FINE.</i>"]
    assert out[1] == ["HI.", "-HELLO."]


def test_sound_and_music_cues_keep_brackets_and_notes():
    p = plan(cue("[door slams]") + cue("(laughing)", 2) + cue("♪ Oh, my love ♪", 3)
             + cue("♪", 4) + cue("...", 5))
    # sound annotations are translated after the sentences, untimed (outside context chains)
    assert [u.text for u in p.units] == ["Oh, my love", "door slams", "laughing"]
    assert [u.start for u in p.units] == [1.0, None, None]
    out = rendered(p)
    assert out[:3] == [["[DOOR SLAMS]"], ["(LAUGHING)"], ["♪ OH, MY LOVE ♪"]]
    assert out[3:] == [["♪"], ["..."]]


def test_empty_cue_is_kept_verbatim():
    p = plan(cue("") + cue("Text", 2))
    assert rendered(p)[0] == []


def test_units_inherit_cue_timing():
    p = plan(cue("- A.\n- B.", 1, "00:00:01,000", "00:00:02,000"))
    assert [(u.start, u.end, u.cue) for u in p.units] == [(1.0, 2.0, 0), (1.0, 2.0, 0)]


def test_ten_thousand_character_cue_is_split_and_nothing_is_lost():
    sentence = "This is a fairly long sentence about nothing at all. "
    body = (sentence * 190).strip()
    assert len(body) > 10_000
    p = plan(cue(body))
    assert len(p.units) > 20 and all(len(u.text) <= 400 for u in p.units)
    assert " ".join(u.text for u in p.units) == body
    assert any("pieces" in w for w in p.warnings)
    lines = rendered(p, fn=lambda s: s)[0]
    assert " ".join(lines) == body


def test_wrap_is_balanced_and_bounded():
    text = "Ну, если честно, я думал, что ты придёшь раньше, а ты опоздал на два часа."
    lines = wrap_text(text)
    assert len(lines) == 2 and all(len(line) <= 42 for line in lines)
    assert abs(len(lines[0]) - len(lines[1])) < 15
    assert wrap_text("Short.") == ["Short."]
    assert wrap_text(text, width=20, max_lines=4) == wrap_text(text, 20, 4)
    assert len(wrap_text(text, width=20, max_lines=4)) == 4
    assert len(wrap_text(text, max_lines=1)) == 2  # the width is the limit, not the line count
    assert wrap_text("") == []


def test_long_cues_get_more_lines_not_longer_ones():
    line = "word " * 20  # ~100 characters
    lines = wrap_text(f"{line} {line}".strip())
    assert len(lines) == 5 and all(len(x) <= 42 for x in lines)
    huge = wrap_text("слово " * 500)
    assert all(len(x) <= 42 for x in huge)
    assert wrap_text("a" * 60) == ["a" * 60]  # one word longer than a line stays whole


def test_readability_counts_long_and_fast_cues():
    from subctx.wrap import readability

    timings = [(0.0, 2.0), (3.0, 4.0), (5.0, 9.0), (None, None)]
    cues = [["<i>Short.</i>"], ["Far too many words for one second."],
            ["one", "two", "three"], ["x" * 40]]
    result = readability(timings, cues, max_lines=2, max_cps=17)
    assert result.over_lines == [2] and result.too_fast == [1]


def test_dashes_written_by_the_model_are_not_doubled():
    p = plan(cue("- Hi.\n- Hello.") + cue("Fine.", 2))
    out = rendered(p, fn=lambda s: f"- {s.upper()}")
    assert out == [["- HI.", "- HELLO."], ["FINE."]]


def test_piece_words_groups_pieces_and_drops_punctuation_and_specials():
    from subctx.layout import piece_words

    pieces = ["▁Mom", ",", "▁I", "▁can", "'", "t", "▁find", "▁it", ".", "<sep>", "▁—"]
    assert piece_words(pieces) == [("Mom", [0, 1]), ("I", [2]), ("can't", [3, 4, 5]),
                                   ("find", [6]), ("it", [7, 8])]


def test_speaker_labels_are_kept_and_leading_annotations_translated_in_brackets():
    p = plan(cue("(sighs) I know.") + cue("[door slams] Get out!", 2)
             + cue("- [Sighs] Fine.\n- JOHN: Where is she?", 3) + cue("MARY ANN: (whispering)", 4)
             + cue("<i>(laughs) Stop it.</i>", 5))
    texts = [u.text for u in p.units]
    assert texts == ["I know.", "Get out!", "Fine.", "Where is she?", "Stop it.",
                     "sighs", "door slams", "Sighs", "whispering", "laughs"]
    assert all(u.start is None for u in p.units[5:])
    out = rendered(p)
    assert out[0] == ["(SIGHS) I KNOW."]
    assert out[1] == ["[DOOR SLAMS] GET OUT!"]
    assert out[2] == ["- [SIGHS] FINE.", "- JOHN: WHERE IS SHE?"]
    assert out[3] == ["MARY ANN: (WHISPERING)"]
    assert out[4] == ["<i>(LAUGHS) STOP IT.</i>"]
    # a model that writes the brackets itself does not get them twice
    texts = [f"[{u.text}]" if u.start is None else u.text for u in p.units]
    assert render_cue(p.layouts[1], texts) == ["[door slams] Get out!"]


def test_not_a_label_or_annotation():
    p = plan(cue("Note: this is fine.") + cue("I said (quietly) no.", 2) + cue("OK: go.", 3))
    assert [u.text for u in p.units] == ["Note: this is fine.", "I said (quietly) no.", "go."]
    assert rendered(p)[2] == ["OK: GO."]


def test_lines_styled_one_by_one_keep_their_tags():
    p = plan(cue("<i>Previously:</i>\nWe lost the keys.")
             + cue("He said:\n<i>Come back tomorrow.</i>", 2))
    assert [u.text for u in p.units] == ["Previously:", "We lost the keys.", "He said:",
                                         "Come back tomorrow."]
    out = rendered(p)
    assert out[0] == ["<i>PREVIOUSLY:</i>", "WE LOST THE KEYS."]
    assert out[1] == ["HE SAID:", "<i>COME BACK TOMORROW.</i>"]


def test_never_an_unbalanced_tag():
    from subctx.markup import balance_tags

    p = plan(cue("<i>Hello there\nand goodbye.") + cue("Fine.</b>", 2)
             + cue("<b><i>Both</i></b>", 3))
    out = rendered(p)
    assert out[0] == ["HELLO THERE AND GOODBYE."] and out[1] == ["FINE."]
    assert out[2] == ["<b><i>BOTH</i></b>"]
    assert sum("unbalanced" in w for w in p.warnings) == 2
    assert balance_tags(["<i>a", "b</i>", "</u>c"]) == (["<i>a", "b</i>", "c"], 1)


# Lyrics. Real files dress every lyric line ('♪ We built the Wall ♪' / '♪ <i>We built the
# pyramids</i> ♪'), or only the cue's first and last line ('♪ Math, Science, History,' /
# 'unraveling the mystery ♪'), often with one sentence running across the lines. A lyric cue is
# one unit (without the notes) and its translation is broken into as many lines as the cue had,
# each line dressed with that line's notes and tags.
SILENCE = ("♪ Hello darkness, my old friend ♪\n♪ I've come to talk with you again ♪")
SUNG = "Hello darkness, my old friend I've come to talk with you again"


def test_two_line_lyrics_keep_the_notes_on_each_line():
    p = plan(cue(SILENCE))
    assert [u.text for u in p.units] == [SUNG]
    assert rendered(p) == [["♪ HELLO DARKNESS, MY OLD FRIEND ♪",
                            "♪ I'VE COME TO TALK WITH YOU AGAIN ♪"]]
    russian = "Здравствуй, тьма, мой старый друг, я снова пришёл поговорить с тобой"
    assert rendered(p, fn=lambda s: russian) == [["♪ Здравствуй, тьма, мой старый друг, ♪",
                                                  "♪ я снова пришёл поговорить с тобой ♪"]]


def test_lyric_line_styles_are_kept_line_by_line():
    variants = {
        "♪ Hello darkness, my old friend\n♪ I've come to talk with you again":
            ["♪ HELLO DARKNESS, MY OLD FRIEND", "♪ I'VE COME TO TALK WITH YOU AGAIN"],
        "♫ Hello darkness, my old friend ♫\n♫ I've come to talk with you again ♫":
            ["♫ HELLO DARKNESS, MY OLD FRIEND ♫", "♫ I'VE COME TO TALK WITH YOU AGAIN ♫"],
        "<i>♪ Hello darkness, my old friend ♪</i>\n<i>♪ I've come to talk with you again ♪</i>":
            ["<i>♪ HELLO DARKNESS, MY OLD FRIEND ♪</i>",
             "<i>♪ I'VE COME TO TALK WITH YOU AGAIN ♪</i>"],
        "♪ <i>Hello darkness, my old friend</i> ♪\n♪ <i>I've come to talk with you again</i> ♪":
            ["♪ <i>HELLO DARKNESS, MY OLD FRIEND</i> ♪",
             "♪ <i>I'VE COME TO TALK WITH YOU AGAIN</i> ♪"],
        "<i>♪ Hello darkness, my old friend\nI've come to talk with you again ♪</i>":
            ["<i>♪ HELLO DARKNESS, MY OLD FRIEND", "I'VE COME TO TALK WITH YOU AGAIN ♪</i>"],
        "♪ Hello darkness, my old friend\nI've come to talk with you again ♪":
            ["♪ HELLO DARKNESS, MY OLD FRIEND", "I'VE COME TO TALK WITH YOU AGAIN ♪"],
        "{\\an8}♪ Hello darkness, my old friend ♪\n♪ I've come to talk with you again ♪":
            ["{\\an8}♪ HELLO DARKNESS, MY OLD FRIEND ♪", "♪ I'VE COME TO TALK WITH YOU AGAIN ♪"],
    }
    for body, expected in variants.items():
        p = plan(cue(body))
        assert [u.text for u in p.units] == [SUNG], body
        assert rendered(p) == [expected], body
        assert not p.warnings, body


def test_three_lyric_lines_stay_three_lines():
    p = plan(cue("♪ Hello darkness ♪\n♪ my old friend ♪\n♪ I've come to talk ♪"))
    assert [u.text for u in p.units] == ["Hello darkness my old friend I've come to talk"]
    out = rendered(p)[0]
    assert out == ["♪ HELLO DARKNESS ♪", "♪ MY OLD FRIEND ♪", "♪ I'VE COME TO TALK ♪"]
    # a translation of fewer words gets fewer lines, never an empty one
    assert rendered(p, fn=lambda s: "Тьма пришла")[0] == ["♪ Тьма ♪", "♪ пришла ♪"]


def test_lyric_translation_longer_than_the_lines_gets_more_dressed_lines():
    long = ("Здравствуй, тьма, мой старый друг, я снова пришёл поговорить с тобой, "
            "потому что видение тихо подкралось")
    for body in (SILENCE, "♪ Hello darkness, my old friend ♪"):
        out = rendered(plan(cue(body)), fn=lambda s: long)[0]
        assert len(out) == 3 and all(len(line) <= 42 for line in out)
        assert all(line.startswith("♪ ") and line.endswith(" ♪") for line in out)
        assert " ".join(line[2:-2] for line in out) == long
    out = rendered(plan(cue("♪ Hello darkness, my old friend\nI've come to talk with you "
                            "again ♪")), fn=lambda s: long)[0]
    assert out[0].startswith("♪ ") and out[-1].endswith(" ♪")
    assert "♪" not in "".join(out)[1:-1]


def test_single_line_lyric():
    p = plan(cue("♪ Hello darkness, my old friend ♪"))
    assert [u.text for u in p.units] == ["Hello darkness, my old friend"]
    assert rendered(p) == [["♪ HELLO DARKNESS, MY OLD FRIEND ♪"]]
    p = plan(cue("<i>♪ Hello darkness ♪</i>") + cue("♪ La la la ♪\n♪", 2)
             + cue("♪\n♪ La la la", 3))
    assert [u.text for u in p.units] == ["Hello darkness", "La la la", "La la la"]
    assert rendered(p) == [["<i>♪ HELLO DARKNESS ♪</i>"], ["♪ LA LA LA ♪", "♪"],
                           ["♪", "♪ LA LA LA"]]


def test_lyrics_inside_a_dialogue_cue():
    p = plan(cue("- ♪ Hello darkness ♪\n- What is that?")
             + cue("- ♪ Hello darkness, ♪\n♪ my old friend ♪\n- Stop singing.", 2))
    assert [u.text for u in p.units] == ["Hello darkness", "What is that?",
                                         "Hello darkness, my old friend", "Stop singing."]
    assert rendered(p) == [["- ♪ HELLO DARKNESS ♪", "- WHAT IS THAT?"],
                           ["- ♪ HELLO DARKNESS, MY OLD FRIEND ♪", "- STOP SINGING."]]


def test_a_sung_line_next_to_a_spoken_one_is_translated_line_by_line():
    p = plan(cue("♪ Happy birthday to you ♪\nThank you!")
             + cue("He sings:\n<i>♪ La la la ♪</i>", 2))
    assert [u.text for u in p.units] == ["Happy birthday to you", "Thank you!", "He sings:",
                                         "La la la"]
    assert rendered(p) == [["♪ HAPPY BIRTHDAY TO YOU ♪", "THANK YOU!"],
                           ["HE SINGS:", "<i>♪ LA LA LA ♪</i>"]]


def test_what_a_translation_cannot_write_into_a_cue():
    p = plan(cue("- Hi.\n- Fine.") + cue("Hello there.", 2) + cue("♪ La la ♪\n♪ La ♪", 3))
    # an empty translation keeps the English (it crashed the wrapped cue)
    out = rendered(p, fn=lambda s: " ")
    assert out[:2] == [["- Hi.", "- Fine."], ["Hello there."]]
    assert len(out[2]) == 2 and all(x.startswith("♪ ") and x.endswith(" ♪") for x in out[2])
    # line breaks and separators are the layout's: one space (a blank line ends a cue)
    out = rendered(p, fn=lambda s: f"{s}\n\n{s}\u2028")
    assert out[0] == ["- Hi. Hi.", "- Fine. Fine."]
    # '-->' would be a timing line to SubRip and WebVTT readers
    assert rendered(p, fn=lambda s: "A --> B")[1] == ["A \u2192 B"]


def test_a_translated_cue_reads_back_into_its_unit_translations():
    from subctx.units import read_cue
    film = ("1\n00:00:01,000 --> 00:00:03,000\nJOHN: Did you see my keys?\n\n"
            "2\n00:00:03,500 --> 00:00:05,000\n(sighs) I think you lost them.\n\n"
            "3\n00:00:05,500 --> 00:00:07,000\n- [laughs] Are you sure?\n- Yes, I saw it.\n\n"
            "4\n00:00:07,500 --> 00:00:09,000\n<i>Can you help me?</i>\n\n"
            "5\n00:00:09,500 --> 00:00:11,000\n[Where are you going?]\n\n"
            "6\n00:00:11,500 --> 00:00:13,000\n♪ Hello darkness, my old friend ♪\n"
            "♪ I've come to talk with you again ♪\n\n"
            "7\n00:00:13,500 --> 00:00:15,000\n" + "It goes on and on. " * 30 + "\n")
    plan = plan_document(parse_srt_text(film))
    assert len(plan.layouts[6].units) == 2  # translated in two pieces
    texts = [f"Строка {u}. Ещё одно предложение." for u in range(len(plan.units))]
    for layout in plan.layouts:
        back = read_cue(layout, render_cue(layout, texts))
        assert back is not None and set(back) == set(layout.units)
        if len(layout.units) == 1 or layout.dialogue or layout.turns[0].note_unit is not None:
            assert all(back[u] == texts[u] for u in back)  # the label is not part of it
        else:  # pieces of one turn: the same sentences, spread in order
            assert " ".join(back[u] for u in layout.units) == \
                " ".join(texts[u] for u in layout.units)
    # a dialogue cue rewritten as one line does not line up with its turns
    assert read_cue(plan.layouts[2], ["Ты уверен? Да, я видел."]) is None


def test_a_dialogue_turn_over_the_width_gets_more_lines_and_reads_back():
    from subctx.units import read_cue
    cue = ("1\n00:00:01,000 --> 00:00:04,000\n- <i>Where did you put the keys?</i>\n"
           "- On the table.\n")
    plan = plan_document(parse_srt_text(cue))
    layout = plan.layouts[0]
    long = "Куда ты положил ключи, которые я оставила тебе вчера вечером?"
    lines = render_cue(layout, [long, "На стол."], width=42)
    assert len(lines) == 3 and all(len(line.replace("<i>", "").replace("</i>", "")) <= 42
                                   for line in lines)
    assert lines[0].startswith("<i>- ") and lines[1].endswith("</i>")
    assert lines[2] == "- На стол."
    assert read_cue(layout, lines) == {0: long, 1: "На стол."}


def test_lines_in_capitals_are_translated_in_sentence_case_and_written_in_capitals():
    film = ("1\n00:00:01,000 --> 00:00:03,000\nWHERE ARE YOU GOING? I'M HERE.\n\n"
            "2\n00:00:03,500 --> 00:00:05,000\n[MUSIC PLAYING]\n\n"
            "3\n00:00:05,500 --> 00:00:07,000\n(SIGHS) I know the FBI.\n")
    plan = plan_document(parse_srt_text(film))
    assert [u.text for u in plan.units] == ["Where are you going? I'm here.",
                                            "I know the FBI.", "Music playing", "Sighs"]
    russian = ["Куда ты идёшь? Я здесь.", "Я знаю ФБР.", "музыка играет", "вздыхает"]
    lines = [render_cue(layout, russian) for layout in plan.layouts]
    assert lines == [["КУДА ТЫ ИДЁШЬ? Я ЗДЕСЬ."], ["[МУЗЫКА ИГРАЕТ]"],
                     ["(ВЗДЫХАЕТ) Я знаю ФБР."]]


def test_a_dash_inside_a_line_opens_a_line_never_ends_one():
    for width in (10, 16, 24, 30):
        lines = wrap_text("- Привет, Джон. - Привет, Мэри. — Как дела?", width)
        assert not any(line.endswith(("-", "—")) for line in lines), lines
        assert " ".join(lines) == "- Привет, Джон. - Привет, Мэри. — Как дела?"


def test_a_word_longer_than_a_line_does_not_break_the_others_apart():
    lines = wrap_text("Откройте сайт https://example.com/very/long/path/to/some/page сейчас "
                      "и посмотрите, что там написано.", 42)
    assert lines == ["Откройте сайт", "https://example.com/very/long/path/to/some/page",
                     "сейчас и посмотрите, что там написано."]


def test_a_line_in_capitals_keeps_its_names():
    film = ("1\n00:00:01,000 --> 00:00:02,000\nHELLO, BOB! HELP ME, JOHN!\n\n"
            "2\n00:00:03,000 --> 00:00:04,000\nRACHEL, WHERE IS ROSS?\n\n"
            "3\n00:00:05,000 --> 00:00:06,000\nDid you see Ross and Bob today?\n\n"
            "4\n00:00:07,000 --> 00:00:08,000\nTHE SUN ROSE. I'M SO SAD.\n")
    assert [u.text for u in plan_document(parse_srt_text(film)).units] == [
        "Hello, Bob! Help me, John!",  # Bob as the film writes it, John a first name
        "Rachel, where is Ross?", "Did you see Ross and Bob today?",
        "The sun rose. I'm so sad."]  # rose is a word too


def test_lines_each_with_a_speaker_label_are_turns():
    from subctx.units import read_cue
    film = ("1\n00:00:01,000 --> 00:00:02,000\nJOHN: Did you call the police?\n"
            "MARY: Not yet.\n\n2\n00:00:03,000 --> 00:00:04,000\nJOHN: I called them,\n"
            "and they are coming.\n")
    plan = plan_document(parse_srt_text(film))
    assert [u.text for u in plan.units] == ["Did you call the police?", "Not yet.",
                                            "I called them, and they are coming."]
    lines = render_cue(plan.layouts[0], ["Вы вызвали полицию?", "Пока нет."])
    assert lines == ["JOHN: Вы вызвали полицию?", "MARY: Пока нет."]
    assert read_cue(plan.layouts[0], lines) == {0: "Вы вызвали полицию?", 1: "Пока нет."}
