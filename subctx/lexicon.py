"""Russian word forms that carry what English leaves open: one list of each, for every module.

English "you" says nothing of ты or вы, "I" and "you" nothing of gender (я сделал / сделала,
ты уверен / уверена), "it" nothing of the gender of what it stands for (он / она / оно). This
module holds the Russian forms that make those choices, and a few helpers about words (which
forms a text uses, the other form of one stem, the speaker's gender a text shows:
`speaker_genders`, what the data labeller labels by); what to do about them is decided elsewhere
(subctx.agreement for the 'agreement' scope, subctx.review.choices for the review screen).

Everything is lower case. Words spelt with ё are listed with е as well (твоём / твоем), as
subtitles write both. No dictionary: verb forms are recognised by their endings, so a rare
noun that looks like a verb (в газете) is screened by what stands before it (`address`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

INFORMAL, FORMAL = "ты", "вы"
MASCULINE, FEMININE, NEUTER, PLURAL = "он", "она", "оно", "они"

_WORD = re.compile(r"\w+", re.UNICODE)


def _forms(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _pairs(text: str) -> tuple[tuple[str, str], ...]:
    """"a/b c/d" -> (("a", "b"), ("c", "d"))"""
    return tuple((one, other) for one, other in (pair.split("/") for pair in text.split()))


def words(text: str) -> list[str]:
    """The words of a text, lower case, in order (hyphenated words cut: «кто-то» is two)."""
    return [w.lower() for w in _WORD.findall(text)]


# -- ты / вы ------------------------------------------------------------------------------------

PRONOUN_PAIRS: tuple[tuple[str, str], ...] = (
    ("ты", "вы"), ("тебя", "вас"), ("тебе", "вам"), ("тобой", "вами"), ("тобою", "вами"),
    ("твой", "ваш"), ("твоя", "ваша"), ("твоё", "ваше"), ("твое", "ваше"), ("твои", "ваши"),
    ("твоего", "вашего"), ("твоей", "вашей"), ("твоему", "вашему"), ("твою", "вашу"),
    ("твоим", "вашим"), ("твоими", "вашими"), ("твоих", "ваших"), ("твоём", "вашем"),
    ("твоем", "вашем"), ("твоею", "вашею"),
)
"""(ты form, вы form) of the personal pronoun and the possessive, every case and gender; where
one вы form answers two ты forms (тобой / тобою -> вами) the first pair is the usual one."""

INFORMAL_PRONOUNS = frozenset(t for t, _ in PRONOUN_PAIRS)
"""ты and твой in every form."""

FORMAL_PRONOUNS = frozenset(v for _, v in PRONOUN_PAIRS)
"""вы and ваш in every form (also the plural "you": Russian has one form for both)."""

PERSON_ENDINGS: tuple[tuple[str, str], ...] = (
    ("ешься", "етесь"), ("ёшься", "ётесь"), ("ишься", "итесь"),  # боишься / боитесь
    ("ешь", "ете"), ("ёшь", "ёте"), ("ишь", "ите"),              # знаешь / знаете
)
"""(ты ending, вы ending) of a verb in the present or the simple future, reflexive first."""

IMPERATIVE_ENDINGS: tuple[tuple[str, str], ...] = (
    ("ись", "итесь"), ("йся", "йтесь"), ("ься", "ьтесь"),  # садись / садитесь
    ("и", "ите"), ("й", "йте"), ("ь", "ьте"),              # смотри / смотрите
)
"""(ты ending, вы ending) of an imperative, reflexive first. The singular endings are those of
countless other words: they say ты only against the plural form of the same stem, or in
IMPERATIVES."""

IMPERATIVES: tuple[tuple[str, str], ...] = _pairs("""
    давай/давайте дай/дайте смотри/смотрите посмотри/посмотрите гляди/глядите
    взгляни/взгляните слушай/слушайте послушай/послушайте подожди/подождите погоди/погодите
    иди/идите пойди/пойдите уходи/уходите проходи/проходите заходи/заходите входи/входите
    выходи/выходите приходи/приходите скажи/скажите расскажи/расскажите покажи/покажите
    извини/извините прости/простите стой/стойте постой/постойте держи/держите помоги/помогите
    пойми/поймите поверь/поверьте верь/верьте оставь/оставьте возьми/возьмите бери/берите
    будь/будьте садись/садитесь сядь/сядьте успокойся/успокойтесь заткнись/заткнитесь
    перестань/перестаньте прекрати/прекратите забудь/забудьте помни/помните вспомни/вспомните
    представь/представьте подумай/подумайте попробуй/попробуйте позвони/позвоните
    беги/бегите брось/бросьте отпусти/отпустите открой/откройте закрой/закройте
    вставай/вставайте встань/встаньте отойди/отойдите вернись/вернитесь уйди/уйдите
    убирайся/убирайтесь отвали/отвалите спроси/спросите ответь/ответьте позволь/позвольте
    угадай/угадайте признай/признайте поторопись/поторопитесь спасай/спасайте спаси/спасите
    волнуйся/волнуйтесь бойся/бойтесь беспокойся/беспокойтесь обещай/обещайте делай/делайте
    сделай/сделайте говори/говорите пошевеливайся/пошевеливайтесь ищи/ищите найди/найдите
    зови/зовите позови/позовите неси/несите принеси/принесите пусти/пустите вали/валите
    ешь/ешьте
""")
"""(ты form, вы form) of common imperatives whose singular is no other word's form (not
«пошли», also "they went"; not «поцелуй», also "a kiss")."""

_SINGULAR_ORDERS = frozenset(sg for sg, _ in IMPERATIVES)
_PLURAL_ORDERS = frozenset(pl for _, pl in IMPERATIVES)
_NOT_SECOND_PERSON = _forms("брешь плешь каравай")  # nouns in -ешь, -вай
# a word in -ете / -ите / -йте / -ьте after these is a noun (в газете, на сайте, при защите)
_PREPOSITIONS = _forms("в во на о об обо при по")
# ... or after an adjective in the prepositional or dative (своём твите, этой планете)
_ADJECTIVE_ENDINGS = ("ом", "ем", "ём", "ой", "ей", "ому", "ему")
_ADVERBS = _forms("потом затем совсем зачем вдвоём вдвоем втроём втроем пешком тайком целиком "
                  "вечером утром днём днем летом зимой весной осенью домой порой скорей "
                  "поскорей быстрей сильней")
_MIN_STEM = 2  # "лишь" (only) is no verb in -ишь


def _stem_ends(word: str, ending: str, min_stem: int = _MIN_STEM) -> bool:
    return word.endswith(ending) and len(word) - len(ending) >= min_stem


def _after_noun_word(before: str) -> bool:
    """Whether a word in a вы ending after `before` is rather a noun (в газете, этой планете)."""
    return before in _PREPOSITIONS or (
        len(before) >= 4 and before not in _ADVERBS and before.endswith(_ADJECTIVE_ENDINGS))


# a reflexive singular imperative: успокойся, останься, садись (not -щийся, -ться, запись, -лись)
_REFLEXIVE_ORDER = re.compile(r"\w{2,}(?:[аяуое]йся|[^\Wаеёиоуыэюяйьтч]ься|[^\Wлп]ись)")
# ... nor a past gerund (удивившись) or an infinitive (разойтись, спастись)
_NOT_REFLEXIVE_ORDERS = ("вшись", "йтись", "стись")
# an imperfective singular imperative: рассказывай, наливай, вставай (not каравай)
_ORDER_ENDINGS = ("ывай", "ивай", "евай", "авай")


@lru_cache(maxsize=1 << 20)  # a million words: bounded, as a long corpus has more
def informal_word(word: str) -> bool:
    """Whether a word, alone, is a ты form: a pronoun, a verb in -ешь / -ишь(ся), a common
    singular imperative (смотри, давай) or a reflexive one (успокойся, останься, садись).
    Remembered per word: labelling a training set asks of the same words millions of times."""
    return (word in INFORMAL_PRONOUNS or word in _SINGULAR_ORDERS
            or (_REFLEXIVE_ORDER.fullmatch(word) is not None
                and not word.endswith(_NOT_REFLEXIVE_ORDERS))
            or (word not in _NOT_SECOND_PERSON
                and (any(_stem_ends(word, t) for t, _ in PERSON_ENDINGS)
                     or any(_stem_ends(word, e) for e in _ORDER_ENDINGS))))


_FORMAL_ENDINGS = tuple(v for _, v in PERSON_ENDINGS + IMPERATIVE_ENDINGS if len(v) > 2)


@lru_cache(maxsize=1 << 20)  # a million words: bounded, as a long corpus has more
def _formal_alone(word: str) -> bool | None:
    """What a word says of вы by itself: True (a pronoun, a plural order, or a reflexive form in
    -сь / -ся of a вы ending), False (no вы ending), None (a вы ending: the word before decides)."""
    if word in FORMAL_PRONOUNS or word in _PLURAL_ORDERS:
        return True
    if not any(_stem_ends(word, v) for v in _FORMAL_ENDINGS):
        return False
    return True if word.endswith(("сь", "ся")) else None


def formal_word(word: str, before: str = "") -> bool:
    """Whether a word is a вы form: a pronoun, a common plural imperative, or a verb in
    -ете / -ите / -йте / -ьте(сь), unless `before` (the word before it) makes it a noun."""
    alone = _formal_alone(word)
    return alone if alone is not None else not _after_noun_word(before)


_INTERJECTIONS = {"ты": _forms("ух")}  # «ух ты» (wow) addresses nobody


def address(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """The ты forms and the вы forms a text uses (pronouns and verb forms), lower case."""
    ws = words(text)
    informal = frozenset(w for i, w in enumerate(ws) if informal_word(w) and not (
        i and ws[i - 1] in _INTERJECTIONS.get(w, ())))
    formal = frozenset(w for i, w in enumerate(ws) if formal_word(w, ws[i - 1] if i else ""))
    return informal, formal


def register(text: str) -> str | None:
    """INFORMAL (ты) or FORMAL (вы) where a text's forms of address say one and not the other,
    else None (none, or both)."""
    informal, formal = address(text)
    return INFORMAL if informal and not formal else FORMAL if formal and not informal else None


BE = _forms("быть был была было были буду будешь будет будем будете будут будь будьте")
"""The forms of быть: an auxiliary (я буду / ты был) as often as a verb of its own."""


def other_form(word: str, pairs: Iterable[tuple[str, str]], min_stem: int = 1) -> list[str]:
    """The forms of `word`'s stem with the other ending of a pair (either way): «знаешь» and
    PERSON_ENDINGS -> ['знаете']."""
    out = []
    for one, other in pairs:
        for a, b in ((one, other), (other, one)):
            if _stem_ends(word, a, min_stem):
                out.append(word[:len(word) - len(a)] + b)
    return out


def paired(a: str, b: str, pairs: Iterable[tuple[str, str]], min_stem: int = 1) -> bool:
    """Whether two words are one stem with the two endings of some pair, either way."""
    return b in other_form(a, pairs, min_stem)


def moves(a: str, b: str, pairs: Iterable[tuple[str, str]], min_stem: int = 1) -> bool:
    """Whether `b` is `a` with the first ending of a pair replaced by the second (one way)."""
    return any(_stem_ends(a, one, min_stem) and b == a[:len(a) - len(one)] + other
               for one, other in pairs)


# -- the gender of the speaker or the listener --------------------------------------------------

GENDER_ENDINGS: tuple[tuple[str, str], ...] = (
    ("л", "ла"), ("лся", "лась"),                                # я понял / поняла
    ("ен", "ена"), ("ён", "ена"), ("ан", "ана"), ("ян", "яна"),  # уверен / уверена
    ("ен", "на"), ("ин", "на"),                                  # должен / должна
    ("ов", "ова"), ("ат", "ата"), ("ят", "ята"), ("ад", "ада"),  # готов / готова
    ("ив", "ива"),                                               # счастлив / счастлива
    ("ый", "ая"), ("ий", "ая"), ("ой", "ая"), ("ий", "яя"),      # безумный / безумная
)
"""(masculine, feminine) endings of one stem: a past tense or a short or full adjective that
agrees with я or ты (я рад / рада). Short stems count (рад has one letter before -ад)."""

PAST_ENDINGS = ("л", "ла", "ло", "ли")
"""The past tense by (masculine, feminine, neuter, plural) subject: сделал, сделала..."""

PAST_TENSE = re.compile(r"(?<!\w)([а-яё]*[аяеиыу])(л|ла|ло|ли)(ся|сь)?(?!\w)", re.IGNORECASE)
"""A past-tense-looking word: a vowel, then л / ла / ло / ли, perhaps reflexive (был, сказала,
пошли, улыбнулся); groups: stem, ending, reflexive. Nouns like стол do not match; see
NOT_PAST_STEMS for those that do."""

NOT_PAST_STEMS = _forms("де си те се ми ви ма ко")
"""Stems (lower case) whose PAST_TENSE match is a noun: дела, сила, тела, села, мила..."""


# -- he / she / it / they ----------------------------------------------------------------------

THIRD_PERSON_CASES: tuple[tuple[str, str, str, str], ...] = (
    ("он", "она", "оно", "они"),
    ("его", "её", "его", "их"),        # genitive, accusative
    ("его", "ее", "его", "их"),
    ("ему", "ей", "ему", "им"),        # dative
    ("им", "ей", "им", "ими"),         # instrumental
    ("им", "ею", "им", "ими"),
    ("него", "неё", "него", "них"),    # after a preposition
    ("него", "нее", "него", "них"),
    ("нему", "ней", "нему", "ним"),
    ("ним", "ней", "ним", "ними"),
    ("ним", "нею", "ним", "ними"),
    ("нём", "ней", "нём", "них"),      # prepositional
    ("нем", "ней", "нем", "них"),
)
"""(masculine, feminine, neuter, plural) forms of он, case by case, spellings with е too."""

THIRD_PERSON: dict[str, frozenset[str]] = {
    gender: frozenset(forms[i] for forms in THIRD_PERSON_CASES)
    for i, gender in enumerate((MASCULINE, FEMININE, NEUTER, PLURAL))}
"""Every form of он, она, оно, они (MASCULINE... as keys). The masculine and the neuter share
all forms but the nominative; «им» and «ним» are plural as well."""


def genders(word: str) -> frozenset[str]:
    """The third-person pronouns (MASCULINE, FEMININE, NEUTER, PLURAL) a word can be a form of:
    «ей» -> {она}, «его» -> {он, оно}, «им» -> {он, оно, они}; empty for other words."""
    return frozenset(g for g, forms in THIRD_PERSON.items() if word in forms)


# -- the speaker: я and what agrees with it ------------------------------------------------------

SHORT_FORMS: tuple[tuple[str, str], ...] = _pairs("""
    рад/рада уверен/уверена готов/готова должен/должна прав/права неправ/неправа
    виноват/виновата счастлив/счастлива свободен/свободна занят/занята болен/больна
    здоров/здорова голоден/голодна сыт/сыта согласен/согласна жив/жива мёртв/мертва
    мертв/мертва сам/сама влюблён/влюблена влюблен/влюблена знаком/знакома
    благодарен/благодарна признателен/признательна обязан/обязана рождён/рождена
    рожден/рождена ранен/ранена удивлён/удивлена удивлен/удивлена поражён/поражена
    поражен/поражена разочарован/разочарована впечатлён/впечатлена впечатлен/впечатлена
    смущён/смущена смущен/смущена уволен/уволена арестован/арестована спасён/спасена
    спасен/спасена испуган/испугана напуган/напугана взволнован/взволнована
    заинтересован/заинтересована обеспокоен/обеспокоена расстроен/расстроена
    измучен/измучена потрясён/потрясена потрясен/потрясена одинок/одинока
    способен/способна неспособен/неспособна достоин/достойна недостоин/недостойна
    похож/похожа нужен/нужна красив/красива умён/умна умен/умна глуп/глупа силён/сильна
    силен/сильна слаб/слаба пьян/пьяна спокоен/спокойна доволен/довольна
    недоволен/недовольна честен/честна серьёзен/серьёзна серьезен/серьезна зол/зла
    женат/замужем тронут/тронута польщён/польщена польщен/польщена очарован/очарована
    огорчён/огорчена огорчен/огорчена вынужден/вынуждена обречён/обречена
    обречен/обречена потерян/потеряна растерян/растеряна хорош/хороша плох/плоха
    стар/стара молод/молода богат/богата беден/бедна горд/горда храбр/храбра добр/добра
    знаменит/знаменита известен/известна заперт/заперта привязан/привязана
""")
"""(masculine, feminine) forms that agree with я (я рад / рада, я сам / сама) where no ending is
safe to go by: short adjectives and participles, listed because their endings are those of
many nouns (роман, жена, Иван). «замужем» is for women only, «женат» for
men; «беременна» has no masculine (FEMININE_ONLY)."""

FEMININE_ONLY = _forms("беременна")

SELF_WORDS: tuple[tuple[str, str], ...] = _pairs("тот/та один/одна")
"""(masculine, feminine) words that agree with я only where they stand for it (я тот, кто...;
я одна; я один из них), not before a noun of their own (я в тот день, я один раз видела)."""

IRREGULAR_PAST: tuple[tuple[str, str], ...] = _pairs("""
    мог/могла смог/смогла помог/помогла шёл/шла шел/шла пришёл/пришла пришел/пришла
    ушёл/ушла ушел/ушла нашёл/нашла нашел/нашла вошёл/вошла вошел/вошла вышел/вышла
    зашёл/зашла зашел/зашла дошёл/дошла дошел/дошла прошёл/прошла прошел/прошла
    подошёл/подошла подошел/подошла перешёл/перешла перешел/перешла пошёл/пошла
    пошел/пошла сошёл/сошла сошел/сошла обошёл/обошла обошел/обошла отошёл/отошла
    отошел/отошла лёг/легла лег/легла умер/умерла замер/замерла запер/заперла
    стёр/стёрла стер/стерла вытер/вытерла принёс/принесла принес/принесла нёс/несла
    унёс/унесла отнёс/отнесла занёс/занесла вынес/вынесла спас/спасла рос/росла
    вырос/выросла испёк/испекла берёг/берегла сжёг/сожгла вёл/вела привёл/привела
    привел/привела подвёл/подвела подвел/подвела перевёл/перевела провёл/провела
    провел/провела завёл/завела завел/завела изобрёл/изобрела приобрёл/приобрела
    боролся/боролась пролез/пролезла залез/залезла привык/привыкла отвык/отвыкла
    исчез/исчезла погиб/погибла промок/промокла замёрз/замёрзла замерз/замерзла
    вёз/везла вез/везла привёз/привезла привез/привезла увёз/увезла увез/увезла
    отвёз/отвезла отвез/отвезла навлёк/навлекла навлек/навлекла привлёк/привлекла
    отвлёк/отвлекла отвлёкся/отвлеклась увлёкся/увлеклась увлекся/увлеклась
""")
"""(masculine, feminine) past tense of verbs PAST_TENSE does not see (the stem ends in a
consonant or in о / ё: мог / могла, пришёл / пришла, умер / умерла, боролся / боролась)."""

SPEAKER_OPENERS = _forms("рад рада уверен уверена согласен согласна готов готова благодарен "
                         "благодарна признателен признательна счастлив счастлива виноват "
                         "виновата")
"""Short forms that, first in a sentence that asks nothing, speak of the speaker without я
(«Рад познакомиться», «Уверена, он придёт»; not «Готов?», asked of the listener)."""

CLAUSE_OPENERS = _forms("""
    что чтобы когда если как где куда откуда почему зачем пока хотя потому поэтому чем
    который которая которое которые которого которой которую которым которыми котором которых
    кто кого кому кем чей чья чьё чье чьи а но или либо зато однако будто словно ибо
""")
"""Words that start another clause: a past tense after them is not said of the я before them
(«я знаю, что она ушла», subtitles dropping the comma too)."""

REPORTING_VERBS = _forms("думаю знаю вижу слышу надеюсь считаю говорю верю понимаю помню "
                         "чувствую боюсь полагаю предполагаю клянусь уверяю обещаю сомневаюсь "
                         "подозреваю")
"""Verbs in the first person present after which another clause often starts without a comma
(«я думаю мама ушла»): a past tense after them is said of someone else."""

NOT_ADJECTIVES = _ADVERBS | _forms("тобой мной собой мною тобою одной мой твой свой")
"""Words in -ой / -ий that are no adjective agreeing with я («я с тобой», «я домой»)."""

INDEFINITE = _forms("то нибудь либо")
"""What makes a clause-opening word an indefinite pronoun: что-то, когда-нибудь, где-либо."""

INFINITIVE = re.compile(r"\w{2,}(?:[аяеиоуы]ть|[аяеиоуы]ться|йти|йтись)")
"""An infinitive (сказать, вернуться, уйти): after one, я's verb has come (я не буду
использовать портал: «портал» is no past tense)."""

SUBJECTS = _forms("ты вы он она оно мы они")
"""Nominative pronouns other than я: a verb after them agrees with them, not with я."""

BEFORE_PREDICATE = _forms("не ни же ж ведь бы уж уже ещё еще так очень тоже также совсем "
                          "слишком вполне действительно правда просто всегда никогда теперь "
                          "сейчас был была буду тогда самый самая такой такая")
"""Words between я and an adjective that agrees with it (я не такая, я так рад, я была
счастлива, я буду рада)."""

GROUP_ADDRESS = _forms("""
    ребята ребятки парни девчонки дамы господа друзья товарищи джентльмены леди коллеги
    бойцы солдаты мальчики народ люди дети братья сёстры сестры братва мужики
""")
"""Words that, said to someone (set off by commas: «Ребята, вы где?»), say that the вы of the
line is plural: Russian has no other form of the plural "you"."""

GROUP_WORDS = _forms("все всех всем всеми оба обе обоих обеих двое трое четверо из")
"""Words that, next to a вы pronoun (вы все, вас обоих, вы двое, кто-то из вас), make it
plural."""


# -- the speaker's gender in a text ------------------------------------------------------------

_MASCULINE_SELF = frozenset(m for m, _ in SHORT_FORMS + IRREGULAR_PAST)
_FEMININE_SELF = frozenset(f for _, f in SHORT_FORMS + IRREGULAR_PAST) | FEMININE_ONLY
_GENDER_OPENERS = {w: MASCULINE if w in _MASCULINE_SELF else FEMININE for w in SPEAKER_OPENERS}
_QUOTED = re.compile(r"«[^»]*»|“[^”]*”|„[^“”]*[“”]|\"[^\"]*\"")
_WHOLE_QUOTE = re.compile(r"[«“„\"]([^«»“”„\"]*)[»“”\"][.!?…]*")
_SENTENCE = re.compile(r"([^.!?…]*)([.!?…]*)")
_CLAUSE = re.compile(r"[,;:()\[\]«»“”„\"—–]|\s-|-\s|^-")
_WINDOW = 6  # words after я within which its verb or adjective is looked for
_STOPS = CLAUSE_OPENERS | SUBJECTS | REPORTING_VERBS
_NO_GENDER = "none"  # a form that agrees with я but has no gender (я и Моника были)
_SELF = {m: MASCULINE for m, _ in SELF_WORDS} | {f: FEMININE for _, f in SELF_WORDS}
_AFTER_SELF = _forms("из самый самая")  # я один из них, я та самая


def _form_gender(word: str, adjective_place: bool, next_word: str | None) -> str | None:
    """MASCULINE / FEMININE for a form that agrees with a subject in that gender, _NO_GENDER for
    a plural or neuter past tense, None for other words; `adjective_place`: nothing but words
    like не / так / был stands between я and the word; `next_word`: None at the clause end."""
    clause_end = next_word is None
    if word in _SELF:
        return _SELF[word] if adjective_place and (clause_end or next_word in _AFTER_SELF) \
            else None
    if word in _MASCULINE_SELF:
        return MASCULINE
    if word in _FEMININE_SELF:
        return FEMININE
    past = PAST_TENSE.fullmatch(word)
    if past and past.group(1) not in NOT_PAST_STEMS:
        return {"л": MASCULINE, "ла": FEMININE}.get(past.group(2), _NO_GENDER)
    if adjective_place and clause_end and word not in NOT_ADJECTIVES and len(word) > 3:
        if word.endswith(("ый", "ий", "ой")):
            return MASCULINE
        if word.endswith(("ая", "яя")):
            return FEMININE
    return None


def _after_i(ws: list[str]) -> str | None:
    """The gender of what agrees with я among the words after it in its clause."""
    for k, word in enumerate(ws[:_WINDOW]):
        after = ws[k + 1] if k + 1 < len(ws) else None
        if word in _STOPS and after not in INDEFINITE:  # что, not что-то
            return None
        adjective_place = all(w in BEFORE_PREDICATE for w in ws[:k])
        gender = _form_gender(word, adjective_place, after)
        if gender is not None:
            return None if gender == _NO_GENDER else gender
        if INFINITIVE.fullmatch(word):  # я не буду использовать портал
            return None
    return None


def _before_i(ws: list[str]) -> str | None:
    """The gender of a past tense before бы я («Хотел бы я...», «Знала бы я»)."""
    if len(ws) >= 2 and ws[-1] == "бы":
        gender = _form_gender(ws[-2], False, "я")
        return gender if gender in (MASCULINE, FEMININE) else None
    return None


def speaker_genders(text: str) -> frozenset[str]:
    """The genders (MASCULINE, FEMININE) that what agrees with the speaker shows: a past tense, a
    short adjective or participle, or a full adjective ending its clause after я (я сделал /
    сделала, я уверена, я не такая), within я's clause (a comma, a clause-opening word, another
    subject or a verb like «думаю» ends it); a past tense before «бы я»; or a sentence that asks
    nothing and opens on a short form like «Рад». Quoted speech is someone else's (a line said
    whole in quotes is the speaker's own). Empty where nothing shows a gender."""
    found: set[str] = set()
    text = text.strip()
    if whole := _WHOLE_QUOTE.fullmatch(text):
        text = whole.group(1)
    text = _QUOTED.sub(",", text)
    for body, end in _SENTENCE.findall(text):
        clauses = [c for c in (words(part) for part in _CLAUSE.split(body)) if c]
        if clauses and clauses[0][0] in _GENDER_OPENERS and "?" not in end:
            found.add(_GENDER_OPENERS[clauses[0][0]])
        for ws in clauses:
            for i, w in enumerate(ws):
                if w == "я" and (gender := _after_i(ws[i + 1:]) or _before_i(ws[:i])):
                    found.add(gender)
    return frozenset(found)
