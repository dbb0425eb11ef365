"""The languages the bot speaks: which catalogue serves a Discord locale, and messages in it.

Every text the bot shows is an English gettext message in the code, marked ``lang._("...")``
(``lang.n_(singular, plural, n)`` for counts; ``N_("...")`` marks one chosen before the
language is known; command names and descriptions are ``locale_str``). Babel extracts them
into ``bot/locales/tttbot.pot`` and each language's catalogue,
``bot/locales/<lang>/LC_MESSAGES/tttbot.po``, translates them (``docs/design.md``'s
"Translations" has the two ``pybabel`` commands). The ``.po`` files are read with
Babel the first time a language is needed: there is no compile step to forget.

Placeholders are ``str.format`` fields (``{name}``), filled after translation, so a translation
may move them. Cell names (``A1``..``E5``) and mentions are placeholders' values, never
translated.
"""

from __future__ import annotations

import functools
import gettext
import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

import babel
import babel.lists
import discord
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import Translations
from discord import app_commands

from game.ai import describe

LOCALES_DIR = Path(__file__).parent / "locales"
TEMPLATE = LOCALES_DIR / "tttbot.pot"
# The marks pybabel extract looks for, beside gettext's own (``_`` among them): the argument
# positions of the message, and of its plural.
# ``UserError(template, ...)``: a refusal's sentence is its first argument.
# ``Difficulty(name, description)`` in game/ai.py: the levels' lines (the engine stays free of
# any translation machinery; only the extraction reads it).
KEYWORDS = {
    "n_": (1, 2),
    "N_": None,
    "locale_str": None,
    "UserError": None,
    "Difficulty": (2,),
}
DOMAIN = "tttbot"
ENGLISH = "en"

# The catalogue that serves each Discord locale; any other locale is shown English.
CATALOGUES: Mapping[discord.Locale, str] = {
    discord.Locale.german: "de",
    discord.Locale.french: "fr",
    discord.Locale.spain_spanish: "es",
    discord.Locale.latin_american_spanish: "es",
    discord.Locale.brazil_portuguese: "pt_BR",
    discord.Locale.japanese: "ja",
}
LANGUAGES = tuple(sorted(set(CATALOGUES.values())))  # the translated ones
ALL_LANGUAGES = (ENGLISH, *LANGUAGES)
CHOICE_NAME_LIMIT = 100  # Discord's, for a choice's name in any language
# How a list reads (CLDR's list patterns, through Babel): "standard" joins with "and", "or"
# offers a choice.
ListStyle = Literal["standard", "or"]


def N_(message: str) -> str:
    """Mark ``message`` for extraction where its language is not known yet; whoever shows it
    translates it then, with :meth:`Language._`."""
    return message


class Language:
    """One language's messages: ``_`` translates and fills placeholders."""

    def __init__(self, code: str, translations: gettext.NullTranslations) -> None:
        self.code = code
        self._translations = translations

    def _(self, message: str, /, **values: object) -> str:
        translated = self._translations.gettext(message)
        return translated.format(**values) if values else translated

    def gettext(self, message: str) -> str:
        """``message`` translated, placeholders left as they are."""
        return self._translations.gettext(message)

    def n_(self, singular: str, plural: str, count: int, /, **values: object) -> str:
        """The form for ``count`` (``{count}`` is filled with it, as are ``values``)."""
        translated = self._translations.ngettext(singular, plural, count)
        return translated.format(count=count, **values)

    def listing(self, items: Sequence[str], style: ListStyle = "standard") -> str:
        """``items`` as this language lists them: "a, b, and c" ("a, b, or c" for a choice);
        in German "a, b und c", in Japanese "a、b、c"."""
        return babel.lists.format_list(list(items), style=style, locale=self.code)

    @functools.cached_property
    def comma(self) -> str:
        """What separates the items of a list this language leaves open ("a, b, c, and 3
        more"): ", ", in Japanese "、"."""
        middle: str = babel.Locale.parse(self.code).list_patterns["standard"]["middle"]
        return middle.format("", "")

    def __repr__(self) -> str:
        return f"<Language {self.code}>"


@functools.cache
def language(code: str) -> Language:
    """The language of catalogue ``code`` (``"de"``, ``"pt_BR"``...), English for ``"en"``.
    A code without a catalogue raises FileNotFoundError: that is a mistake in the code."""
    if code == ENGLISH:
        return Language(ENGLISH, gettext.NullTranslations())
    path = LOCALES_DIR / code / "LC_MESSAGES" / f"{DOMAIN}.po"
    with path.open("rb") as po_file:
        catalog = read_po(po_file, locale=code, domain=DOMAIN)
    compiled = io.BytesIO()
    write_mo(compiled, catalog)
    compiled.seek(0)
    return Language(code, Translations(compiled, domain=DOMAIN))


def for_locale(locale: discord.Locale | None) -> Language:
    """The language to show someone whose Discord client is set to ``locale``."""
    code = CATALOGUES.get(locale) if locale is not None else None
    return language(code or ENGLISH)


ENGLISH_LANGUAGE = language(ENGLISH)


class CommandTranslator(app_commands.Translator):
    """Command and option names, descriptions and choices in every covered language, from
    the same catalogues (they are marked with ``locale_str`` for extraction); Discord shows
    each member their own."""

    async def translate(
        self,
        string: app_commands.locale_str,
        locale: discord.Locale,
        context: app_commands.TranslationContextTypes,
    ) -> str | None:
        code = CATALOGUES.get(locale)
        if code is None:
            return None
        lang = language(code)
        level = string.extras.get("level")
        if level is not None:
            # A level's choice: its name, and its line from the engine's descriptions.
            return f"{level} — {lang.gettext(describe(level))}"[:CHOICE_NAME_LIMIT]
        # A name English shares with another command's (/ttt start, /ttt tournament start)
        # says which message of the catalogues is its own.
        message = string.extras.get("msgid", string.message)
        translated = lang.gettext(message)
        return None if translated == message else translated
