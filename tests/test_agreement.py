"""What context may change in the 'agreement' scope: ты/вы, gender, pronouns."""

from subctx.agreement import FORMALITY, GENDER, PRONOUN, changes


def test_formality_pronouns_and_verb_forms():
    assert changes("Вы ничего не забыли?", "Ты что-нибудь забыл?") >= {FORMALITY}
    assert changes("Знаешь, что я не...", "Знаете, что я не...") == {FORMALITY}
    assert changes("Посмотри на это!", "Посмотрите на это!") == {FORMALITY}
    assert changes("Не бойся.", "Не бойтесь.") == {FORMALITY}
    assert changes("Ты был там?", "Вы были там?") == {FORMALITY}
    # a pronoun added or dropped changes who is addressed as well
    assert changes("Рад познакомиться с вами.", "Приятно познакомиться.") >= {FORMALITY}


def test_gender_of_speaker_or_listener():
    assert changes("Да. Я понял.", "Да. Я поняла.") == {GENDER}
    assert changes("Я познакомился с ним.", "Я познакомилась с ним.") == {GENDER}
    assert changes("Ты уверен?", "Ты уверена?") == {GENDER}
    assert changes("Я так рад.", "Я так рада.") == {GENDER}
    assert changes("Ты не безумный!", "Ты не безумная!") == {GENDER}


def test_third_person_pronoun_gender():
    assert changes("Он на кухне.", "Она на кухне.") == {PRONOUN}
    assert changes("Я видел его.", "Я видел её.") == {PRONOUN}


def test_wording_alone_is_not_agreement():
    assert changes("Я возьму свои вещи вместе.", "Я принесу свои вещи вместе.") == set()
    assert changes("Ого, Джо, это...", "Ого, Джо, это…") == set()
    assert changes("Он у дома.", "Он у дом.") == set()  # a case ending, not gender
    assert changes("В один день...", "Однажды...") == set()
    assert changes("Same text", "Same text") == set()


def test_register_and_where_a_change_moves():
    from subctx.agreement import FORMAL, INFORMAL, _moved_to, register

    assert register("Ты где?") == INFORMAL and register("Где ваша машина?") == FORMAL
    assert register("Где машина?") is None and register("Ты и вы.") is None
    assert _moved_to("Ты знаешь.", "Вы знаете.") == FORMAL
    assert _moved_to("Смотрите!", "Смотри!") == INFORMAL  # an ending alone
    assert _moved_to("Он здесь.", "Она здесь.") is None



def test_elided_verbs():
    from subctx.agreement import elided

    for source in ("I did.", "No, I didn't.", "Yes, she does!", "You will?", "I can too.",
                   "- I'm not. - You are."):
        assert elided(source), source
    for source in ("I did it!", "Do you like it?", "It is exactly seven.", "I have a pot.",
                   "What do I do?", "What can we do?"):
        assert not elided(source), source


def test_words_of_address_are_worth_asking_only_for_a_register_before_them():
    from subctx.agreement import worth_asking

    assert worth_asking("Are you sure?", "Ты уверен?", ["Вы кто?"])
    assert not worth_asking("Are you sure?", "Вы уверены?", ["Вы кто?"])  # has it already
    assert not worth_asking("Are you sure?", "Ты уверен?", ["Привет, Анна."])  # none told
    assert not worth_asking("Wait here.", "Жди здесь.", ["Это дом."])
    assert worth_asking("Is it yours?", "Это твоё?", ["Это дом."])  # it: a pronoun's gender
    assert worth_asking("You did.", "Ты сделал.", ["Это дом."])  # an elided verb
    assert not worth_asking("Seven sharp.", "Ровно семь.", ["Вы кто?"])  # nothing to change


def test_needs_context_from_the_english():
    from subctx.agreement import needs_context

    for source in ("You'll have to.", "Is it hers?", "Wait.", "Hey, look at this!", "Don’t go!",
                   "I did."):
        assert needs_context(source), source
    # the speaker's gender and the plural are left to the translation without context
    for source in ("The line in the script was wrong.", "Wow, Joey, this is great.", "Seven sharp.",
                   "Fred is the strongest cyclone.", "I'm fine.", "They left.", "She left."):
        assert not needs_context(source), source
