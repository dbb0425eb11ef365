"""The bot's languages: the catalogues hold every message the code marks, each translated in
every language with the same placeholders, command names localised within Discord's rules;
and, end to end, each member reads their own language while public messages follow the
server's."""

from __future__ import annotations

import json
import random
import re
import string
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import discord
import pytest
from babel.messages.catalog import Catalog, Message
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
from babel.messages.pofile import read_po

from bot import errors, extension, i18n, render
from bot.client import TTTBot
from bot.config import Settings, parse_database_url
from bot.domain import Listed, UserError, Verbatim
from game import Board
from game.review import Verdict, review_game
from tests.bot_harness import BotHarness, both_front_doors, cell_id, text_of
from tests.discord_sim import DiscordSim

REPO = Path(__file__).resolve().parent.parent
# A cell's name in a message (`B2`, `E5`, ultimate's `I9`), not part of a longer word.
CELL_NAME = re.compile(r"(?<![\w{])[A-I][1-9](?!\w)", re.ASCII)


def follows_discords_name_rule(name: str) -> bool:
    """Discord's rule for command and option names,
    ``^[-_\\p{L}\\p{N}\\p{sc=Deva}\\p{sc=Thai}]{1,32}$`` (Python's ``re`` has no ``\\p{...}``:
    read from the characters' categories and names)."""
    return 1 <= len(name) <= 32 and all(
        char in "-_"
        or unicodedata.category(char)[0] in "LN"
        or unicodedata.name(char, "").startswith(("DEVANAGARI ", "THAI "))
        for char in name
    )


def catalogue(code: str) -> Catalog:
    with (i18n.LOCALES_DIR / code / "LC_MESSAGES" / f"{i18n.DOMAIN}.po").open("rb") as po:
        return read_po(po, locale=code, domain=i18n.DOMAIN)


def template() -> Catalog:
    with i18n.TEMPLATE.open("rb") as pot:
        return read_po(pot)


def marked_in_code() -> set[str]:
    """What ``pybabel extract`` finds in the bot's code now (singulars; plurals by singular)."""
    keywords = {**DEFAULT_KEYWORDS, **i18n.KEYWORDS}
    found = set()
    method_map = [("bot/**.py", "python"), ("game/ai.py", "python")]  # as babel.cfg
    for _, _, message, _, _ in extract_from_dir(str(REPO), method_map, keywords=keywords):
        found.add(message[0] if isinstance(message, tuple) else message)
    return found


def ids(catalog: Catalog) -> set[str]:
    return {_singular(message) for message in catalog if message.id}


def _singular(message: Message) -> str:
    return message.id[0] if isinstance(message.id, tuple) else str(message.id)


def placeholders(text: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(text) if field is not None}


def translations(message: Message) -> Iterator[str]:
    if isinstance(message.string, tuple):
        yield from message.string
    else:
        yield str(message.string)


def test_the_template_holds_exactly_what_the_code_marks() -> None:
    """Regenerate it with docs/design.md's pybabel extract command when this fails."""
    assert ids(template()) == marked_in_code()
    assert len(marked_in_code()) > 100


@pytest.mark.parametrize("code", i18n.LANGUAGES)
def test_every_message_is_translated_with_the_same_placeholders(code: str) -> None:
    translated = catalogue(code)
    missing, broken = [], []
    for message in template():
        if not message.id:
            continue
        found = translated.get(message.id)
        if found is None or found.fuzzy or not all(translations(found)):
            missing.append(_singular(message))
            continue
        english = placeholders(_singular(message))
        if isinstance(message.id, tuple):
            english |= placeholders(message.id[1])
        for text in translations(found):
            if placeholders(text) - english or not placeholders(text) <= english:
                broken.append(f"{_singular(message)!r} -> {text!r}")
    assert missing == [], f"{code}: {len(missing)} messages not translated"
    assert broken == []


@pytest.mark.parametrize("code", i18n.LANGUAGES)
def test_cell_names_stay_as_they_are_in_every_language(code: str) -> None:
    """A cell is `B2` in every language: each cell a message names is in its translations."""
    translated = catalogue(code)
    naming, renamed = 0, []
    for message in template():
        if not message.id:
            continue
        english = set(CELL_NAME.findall(_singular(message)))
        if isinstance(message.id, tuple):
            english |= set(CELL_NAME.findall(message.id[1]))
        if not english:
            continue
        naming += 1
        for text in translations(translated[message.id]):
            if not english <= set(CELL_NAME.findall(text)):
                renamed.append(f"{_singular(message)!r} -> {text!r}")
    assert naming >= 5
    assert renamed == []


async def translated_commands() -> list[dict[str, Any]]:
    """Every command as the bot registers it (``/ttt`` and ``/ttt-settings``), with each
    covered language's names, descriptions and choices."""
    settings = Settings(token="t", database=parse_database_url("sqlite:///:memory:"))
    bot = TTTBot(settings)
    await extension.setup(bot)
    translator = i18n.CommandTranslator()
    return [
        await command.get_translated_payload(bot.tree, translator)
        for command in bot.tree.get_commands()
    ]


async def test_localised_command_names_follow_discords_rules() -> None:
    names: dict[str, list[str]] = {}
    for payload in await translated_commands():
        for locale, name in _localised(payload, "name"):
            assert follows_discords_name_rule(name), name
            assert name == name.lower(), name
            names.setdefault(locale, []).append(name)
        # Descriptions and choices: 1 to 100 characters in every language, as Discord allows.
        for _, text in _localised(payload, "description"):
            assert 1 <= len(text) <= 100, text
    # Every covered locale names the subcommands and their options (a name the same as
    # English, like French "stats", is not sent), /ttt-settings too, and /ttt itself stays
    # /ttt.
    assert set(names) == {locale.value for locale in i18n.CATALOGUES}
    for localised in names.values():
        assert len(localised) >= 80
        assert "ttt" not in localised


# A command a message names (`/ttt move`, `/ttt-settings language`, `/ttt tournament create`),
# and an option it names in code (`size:4`, `cell:B2`).
COMMAND_NAMED = re.compile(r"/(ttt(?:-settings)?)((?: [a-z][a-z-]*){0,2})")
SUBCOMMAND, SUBCOMMAND_GROUP = 1, 2  # option types
CODE = re.compile(r"`[^`]+`")
OPTION_NAMED = re.compile(r"(?<![\w/-])([a-z][a-z-]*):")


@dataclass
class LocalisedNames:
    """How one Discord locale names the commands and their options."""

    commands: dict[tuple[str, ...], str]  # English path -> its path there, "/ttt zug"
    options: dict[str, set[str]]  # English option name -> its names there


def localised_names(payloads: list[dict[str, Any]], locale: str) -> LocalisedNames:
    names = LocalisedNames({}, {})

    def visit(command: dict[str, Any], english: tuple[str, ...], there: tuple[str, ...]) -> None:
        here = (command.get("name_localizations") or {}).get(locale, command["name"])
        english, there = (*english, command["name"]), (*there, here)
        names.commands[english] = "/" + " ".join(there)
        for option in command.get("options") or []:
            if option["type"] in (SUBCOMMAND, SUBCOMMAND_GROUP):
                visit(option, english, there)
            else:
                localised = (option.get("name_localizations") or {}).get(locale, option["name"])
                names.options.setdefault(option["name"], set()).add(localised)

    for payload in payloads:
        visit(payload, (), ())
    return names


def named_commands(text: str, names: LocalisedNames) -> Iterator[tuple[str, ...]]:
    """The English paths of the commands ``text`` names (the longest each mention makes)."""
    for mention in COMMAND_NAMED.finditer(text):
        words = (mention[1], *mention[2].split())
        yield next(words[:n] for n in range(len(words), 0, -1) if words[:n] in names.commands)


@pytest.mark.parametrize("locale", sorted(locale.value for locale in i18n.CATALOGUES))
async def test_messages_name_commands_and_options_as_the_readers_discord_does(
    locale: str,
) -> None:
    """A member whose Discord shows `/ttt zug feld:` is told to use `/ttt zug feld:B2`, not
    `/ttt move cell:B2`, which their command list does not show: every message that names a
    command, or an option in code, names it as the member's language does."""
    names = localised_names(await translated_commands(), locale)
    translated = catalogue(i18n.CATALOGUES[discord.Locale(locale)])
    checked, wrong = 0, []
    for message in template():
        if not message.id:
            continue
        english = _singular(message)
        commands = set(named_commands(english, names))
        options = {
            option
            for code in CODE.findall(english)
            for option in OPTION_NAMED.findall(code)
            if option in names.options
        }
        if not commands and not options:
            continue
        checked += 1
        for text in translations(translated[message.id]):
            for command in commands:
                if names.commands[command] not in text:
                    wrong.append(f"{english[:60]!r}: {names.commands[command]!r} in {text!r}")
            for option in options:
                if not any(f"{there}:" in text for there in names.options[option]):
                    wrong.append(f"{english[:60]!r}: {names.options[option]} in {text!r}")
    assert checked >= 20
    assert wrong == []


# The bot speaks to a member as a friend does, in every message: French "tu", never "vous",
# Spanish "tú", never "usted" (a help that says "tu" and then "vous" reads as two authors);
# except to several members at once (a round's two players), whom friends call "vous" too.
FORMAL_ADDRESS = {
    "fr": re.compile(r"\b(?:vous|votre|vos)\b", re.IGNORECASE),
    "es": re.compile(r"\b(?:usted|ustedes)\b", re.IGNORECASE),
}


@pytest.mark.parametrize("code", sorted(FORMAL_ADDRESS))
def test_each_language_addresses_the_member_one_way(code: str) -> None:
    formal = [
        text
        for message in catalogue(code)
        if message.id and _singular(message).count("<@{") < 2
        for text in translations(message)
        if FORMAL_ADDRESS[code].search(text)
    ]
    assert formal == []


def _localised(payload: dict[str, Any], field: str) -> Iterator[tuple[str, str]]:
    """Every ``<field>_localizations`` entry of a command, its options and their choices
    (choices' names count as descriptions here: they are text, not identifiers)."""
    yield from (payload.get(f"{field}_localizations") or {}).items()
    if field == "description":
        for choice in payload.get("choices") or []:
            yield from (choice.get("name_localizations") or {}).items()
    for option in payload.get("options") or []:
        yield from _localised(option, field)


def test_every_covered_discord_locale_reads_its_catalogue() -> None:
    for locale, code in i18n.CATALOGUES.items():
        assert i18n.for_locale(locale).code == code
    assert i18n.for_locale(discord.Locale.korean).code == i18n.ENGLISH
    assert i18n.for_locale(None).code == i18n.ENGLISH


@pytest.mark.parametrize(
    ("code", "choice", "two", "listing", "open_list"),
    [
        ("en", "A, <@&2>, or C", "*A* or *b*", "A, B, and C", "A, B, C"),
        ("de", "A, <@&2> oder C", "*A* oder *b*", "A, B und C", "A, B, C"),
        ("fr", "A, <@&2> ou C", "*A* ou *b*", "A, B et C", "A, B, C"),
        ("ja", "A、<@&2>、またはC", "*A*または*b*", "A、B、C", "A、B、C"),
    ],
)
def test_lists_read_as_each_language_writes_them(
    code: str, choice: str, two: str, listing: str, open_list: str
) -> None:
    lang = i18n.language(code)
    refusal = UserError("{}", Listed(("A", Verbatim("<@&2>"), "C")))
    assert refusal.sentence(lang, str) == choice
    # Items are escaped as names are (here: upper-cased), unless the bot wrote them.
    assert UserError("{}", Listed(("*a*", Verbatim("*b*")))).sentence(lang, str.upper) == two
    assert lang.listing(["A", "B", "C"]) == listing
    assert lang.comma.join(["A", "B", "C"]) == open_list
    # Logs and tests read the English.
    assert str(refusal) == "A, <@&2>, or C"


@both_front_doors
async def test_each_member_reads_their_language_and_the_board_the_servers(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    s.guild.locale = "fr"
    s.alice.locale = "de"
    s.bob.locale = "ja"
    async with harness.running():
        started = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="minimax")
        mistake = await sim.slash(s.alice, s.channel, "ttt move", cell="Z9")
        watching = await sim.slash(s.bob, s.channel, "ttt move", cell="B2")
        unknown = await sim.slash(s.carol, s.channel, "ttt move", cell="B2")
        helped = await sim.slash(s.alice, s.channel, "ttt help")
        # A move: the board stays French whoever plays.
        assert started.message is not None
        moved = await sim.click(s.alice, started.message, cell_id(started.message, "A1"))
        registered = sim.commands()
    french, german = i18n.language("fr"), i18n.language("de")
    # Public: the board in the server's language; cell names as everywhere.
    board = text_of(started)
    assert board.startswith("\nMorpion\n")
    assert "Partie #" in board
    assert "Morpion" in text_of(moved)
    assert french._("Last move: {cell}.", cell="A1") in text_of(moved)
    # Private: each member's own language, the English for a locale not covered (Carol's).
    assert mistake.ephemeral
    assert text_of(mistake).startswith('"Z9" ist kein Feld')
    assert text_of(watching) == "あなたはこのゲームのプレイヤーではありません。観戦はできます。"
    assert text_of(unknown) == "You are not playing in this game: you can watch, though."
    assert text_of(helped).startswith(f"\n{german._('Tic-tac-toe')}\n")
    assert "/ttt zug feld:B2" in text_of(helped)
    # Discord gets every command's names and descriptions in every covered language.
    ttt = next(command for command in registered if command["name"] == "ttt")
    move = next(option for option in ttt["options"] if option["name"] == "move")
    assert move["name_localizations"]["de"] == "zug"
    assert move["name_localizations"]["ja"] == "打つ"
    assert move["description_localizations"]["fr"].startswith("Joue une case")


@both_front_doors
async def test_a_command_discord_shows_as_it_was_before_is_refused_in_the_members_language(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """After a deploy changed the commands, a member's Discord may still send the old ones: a
    subcommand this process no longer has, or one without an option it now needs. They were
    answered with discord.py's English words for the developer ("Application command
    'retired' not found", "...you have not synced the commands with Discord...")."""
    s = sim.seed
    s.alice.locale = "de"

    def retired(data: dict[str, Any]) -> None:
        data["options"][0]["name"] = "retired"

    def without_options(data: dict[str, Any]) -> None:
        data["options"][0]["options"] = []

    async with harness.running():
        gone = await sim.slash(s.alice, s.channel, "ttt move", cell="B2", tamper=retired)
        changed = await sim.slash(s.alice, s.channel, "ttt move", cell="B2", tamper=without_options)
        assert sim.messages(s.channel) == [gone.message, changed.message]  # nothing else
    german = i18n.language("de")._(errors.STALE_COMMAND)
    assert german.startswith("Dieser Befehl hat sich geändert")
    for refused in (gone, changed):
        assert refused.ephemeral
        assert refused.content == german


FULL_WIDTH_B = "\N{FULLWIDTH LATIN CAPITAL LETTER B}"
FULL_WIDTH_2 = "\N{FULLWIDTH DIGIT TWO}"
FULL_WIDTH_5 = "\N{FULLWIDTH DIGIT FIVE}"


@both_front_doors
async def test_full_width_letters_and_digits_are_read_as_what_they_show(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """A Japanese input method types B2 and 5m in full-width forms unless switched to
    half-width: the member sees B2 and 5m, and was refused (full-width "B2 is not a cell"),
    offered no cell while typing one, and could not set a duration."""
    s = sim.seed
    s.guild.locale = s.owner.locale = s.alice.locale = "ja"
    async with harness.running() as bot:
        started = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="minimax")
        assert started.message is not None, started.content
        offered = await sim.autocomplete(
            s.alice, s.channel, "ttt move", focused="cell", cell=FULL_WIDTH_B.lower()
        )
        numbered = await sim.autocomplete(
            s.alice, s.channel, "ttt move", focused="cell", cell=FULL_WIDTH_5
        )
        moved = await sim.slash(s.alice, s.channel, "ttt move", cell=FULL_WIDTH_B + FULL_WIDTH_2)
        assert not moved.ephemeral, moved.content
        set_to = await sim.slash(
            s.owner,
            s.channel,
            "ttt-settings timeouts",
            turn=FULL_WIDTH_5 + "\N{FULLWIDTH LATIN SMALL LETTER M}",
        )
        assert set_to.ephemeral
        assert await bot.in_flight.wait_idle(patience=5)
        settings = await bot.service.server_settings.of(s.guild.id)
    assert [choice["value"] for choice in offered] == ["B1", "B2", "B3"]
    assert [choice["value"] for choice in numbered] == ["B2"]
    assert i18n.language("ja")._("Last move: {cell}.", cell="B2") in text_of(moved)
    assert settings.turn_timeout == 300


def test_the_bots_review_sentences_in_english_are_the_engines_word_for_word() -> None:
    """The bot words each move itself (so that every language can); in English it must say
    exactly what ``game.review`` says, in every case: good moves, game-ending ones, blunders
    and missed wins, won at once or kept."""
    rng = random.Random(7)
    seen = set()
    for size in (3, 3, 3, 4):
        for _ in range(150 if size == 3 else 10):
            board, moves = Board(size), []
            while not board.is_over:
                moves.append(rng.choice(board.legal_moves))
                board = board.play(moves[-1])
            for move in review_game(moves, size):
                assert render.move_sentence(move, i18n.ENGLISH_LANGUAGE) == move.sentence
                seen.add((move.verdict, move.value_before, move.value_after))
    assert {verdict for verdict, _, _ in seen} == set(Verdict)


@both_front_doors
@pytest.mark.parametrize("scope", ["global", "guild"])
async def test_the_commands_registered_are_what_discord_py_would_sync(
    sim: DiscordSim, harness: BotHarness, monkeypatch: pytest.MonkeyPatch, scope: str
) -> None:
    """The bot registers its commands itself, with the definitions it translated once per
    process: they must be exactly what ``CommandTree.sync`` would have sent, translations
    included, globally and for one server."""
    sent: list[Any] = []
    upsert = f"bulk_upsert_{scope}_commands"
    unspied = getattr(discord.http.HTTPClient, upsert)

    async def spied(self: discord.http.HTTPClient, *args: Any, payload: Any) -> Any:
        sent.append(json.loads(json.dumps(payload)))
        return await unspied(self, *args, payload=payload)

    monkeypatch.setattr(discord.http.HTTPClient, upsert, spied)
    guild_id = sim.seed.guild.id if scope == "guild" else None
    async with harness.running(guild_id=guild_id) as bot:
        tree, translator = bot.tree, bot.tree.translator
        assert translator is not None
        guild = discord.Object(guild_id) if guild_id else None
        expected = [
            await command.get_translated_payload(tree, translator)
            for command in tree._get_all_commands(guild=guild)
        ]
    assert sent == [expected]
    assert [c["name"] for c in sim.commands(guild_id)] == [c["name"] for c in expected]


@both_front_doors
async def test_a_definition_discord_refuses_is_a_command_sync_failure(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """A 400 with code 50035 (Invalid Form Body) on the commands' PUT reads as discord.py's
    ``CommandSyncFailure``, as ``CommandTree.sync`` would raise it, naming the commands."""
    async with harness.running() as bot:
        invalid = {"code": 50035, "message": "Invalid Form Body", "errors": {}}
        sim.faults.add("PUT /applications/{application_id}/commands", status=400, body=invalid)
        with pytest.raises(discord.app_commands.CommandSyncFailure) as refused:
            await bot.sync_commands(force=True)
        assert refused.value.status == 400
        assert refused.value.code == 50035


# Every board footer the bot has posted, in each language, since boards were translated: a
# click is checked against the game its board's footer names (render.board_game_id), so a
# footer that no longer reads as one would leave every board already posted with it
# unplayable after an upgrade (each click refused: "That button doesn't belong to this
# message"). A translation of the footer may change only if its old form stays readable.
POSTED_FOOTERS = (
    "Game #12 · click a cell or use /ttt move",
    "Spiel #12 · klicke auf ein Feld oder nutze /ttt zug",
    "Partida #12 · haz clic en una casilla o usa /ttt jugar",
    "Partie #12 · clique sur une case ou utilise /ttt jouer",
    "ゲーム #12 · マスをクリックするか /ttt 打つ を使ってください",
    "Partida #12 · clique em uma casa ou use /ttt jogar",
    "Game #12",
    "Spiel #12",
    "Partida #12",
    "Partie #12",
    "ゲーム #12",
)


@pytest.mark.parametrize("footer", POSTED_FOOTERS)
def test_boards_posted_by_earlier_versions_still_name_their_game(footer: str) -> None:
    assert render.game_in_footers([footer]) == 12  # an embed's footer (3x3, 4x4)
    layout = render.LAYOUT_FOOTER.format(footer)  # a components-v2 board's last line
    assert render.game_in_footers([layout]) == 12
