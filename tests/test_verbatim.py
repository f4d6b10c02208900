"""Addresses and long numbers are copied from the English, not translated."""

import pytest

from subctx.verbatim import restore_verbatim, verbatim_tokens


def test_the_tokens_to_copy():
    assert verbatim_tokens("Go to https://github.com/foo/bar, then www.example.com.") == [
        "https://github.com/foo/bar", "www.example.com"]
    assert verbatim_tokens("Mail john.doe@mail.com or call 1-800-555-0199!") == [
        "john.doe@mail.com", "1-800-555-0199"]
    assert verbatim_tokens("In 1985 I had 3 cats and 12345 dollars at 10:30.") == [
        "12345", "10:30"]
    assert verbatim_tokens("No numbers here, just words.") == []


@pytest.mark.parametrize("english, machine, mended", [
    ("Call 1-800-555-0199 now.", "Позвоните 1-800-5-01 сейчас.",
     "Позвоните 1-800-555-0199 сейчас."),
    ("Visit https://github.com/foo/bar today.", "Посетите htps://gitub.com/footh/dar сегодня.",
     "Посетите https://github.com/foo/bar сегодня."),
    ("Go to www.example.com.", "Иди на Wwww.com.", "Иди на www.example.com."),
    ("Write to john.doe@mail.com please.", "Напиши на джон.доу@майл.ком, пожалуйста.",
     "Напиши на john.doe@mail.com, пожалуйста."),
    # a mangled figure is written the Russian way
    ("It costs 1,234,567 dollars.", "Это стоит 1234,567 долларов.",
     "Это стоит 1 234 567 долларов."),
    ("Turkey occupies 755,688 square km.", "Турция занимает 7556 88 квадратов.",
     "Турция занимает 755 688 квадратов."),
])
def test_a_mangled_copy_is_put_back(english, machine, mended):
    assert restore_verbatim(english, machine) == mended


@pytest.mark.parametrize("english, translation", [
    ("It costs 1,234,567 dollars.", "Это стоит 1 234 567 долларов."),  # the Russian way
    ("It was 3.5 miles.", "Это было 3,5 мили."),
    ("Meet me at 10:30.", "Встретимся в 10:30."),
    ("Mail me at bob@site.org.", "Напиши мне."),  # dropped: there is no place to put it back
    ("Call 555-1234.", "Позвони мне завтра."),  # nothing like it: nothing replaced
])
def test_a_right_or_missing_copy_is_left_alone(english, translation):
    assert restore_verbatim(english, translation) == translation


def test_addresses_the_model_turned_into_words_are_found_by_their_ending():
    assert restore_verbatim(
        "Visit www.example.com or write to help@example.org.",
        "Витититвио.com или написать помощь в суперсексуалами.org.") == \
        "www.example.com или написать помощь в help@example.org."
    # a piece of the address written beside the mangled one goes with it
    assert restore_verbatim("E-mail john.smith@example.com today!",
                            "Напиши john.smi wexample.com сегодня!") == \
        "Напиши john.smith@example.com сегодня!"
    assert restore_verbatim("Go to https://example.com/help?id=42 now.",
                            "Иди в htps://example.com/hepl?id=42 сейчас.") == \
        "Иди в https://example.com/help?id=42 сейчас."
