"""Durations as server admins type them (``/ttt-settings timeouts`` and ``limits``), in every
language the bot speaks."""

from __future__ import annotations

import pytest

from bot.server_settings import parse_duration

MINUTE, HOUR, DAY = 60, 3600, 86400


@pytest.mark.parametrize(
    ("typed", "seconds"),
    [
        # The hints' own spellings.
        ("90", 90),
        ("90s", 90),
        ("5m", 5 * MINUTE),
        ("2h", 2 * HOUR),
        ("1d", DAY),
        ("1h30m", HOUR + 30 * MINUTE),
        ("0", 0),
        ("1.5h", 90 * MINUTE),
        ("5 MIN", 5 * MINUTE),
        # A number left without a unit after one counts in the next smaller unit.
        ("1h30", HOUR + 30 * MINUTE),
        ("2m30", 2 * MINUTE + 30),
        ("1d12", DAY + 12 * HOUR),
        # French, German, Spanish, Portuguese, Japanese.
        ("1j", DAY),
        ("2 jours", 2 * DAY),
        ("1 heure 30 minutes", HOUR + 30 * MINUTE),
        ("1 heure et 30 minutes", HOUR + 30 * MINUTE),
        ("45mn", 45 * MINUTE),
        ("1 Stunde und 30 Minuten", HOUR + 30 * MINUTE),
        ("2 horas y 15 minutos", 2 * HOUR + 15 * MINUTE),
        ("1 dia e 2 horas", DAY + 2 * HOUR),
        ("1 hour and 30 minutes", HOUR + 30 * MINUTE),
        ("1h, 30m", HOUR + 30 * MINUTE),
        ("2 Std.", 2 * HOUR),
        ("1 Tag", DAY),
        ("10 Sekunden", 10),
        ("1,5 h", 90 * MINUTE),
        ("3 días", 3 * DAY),
        ("2 horas", 2 * HOUR),
        ("45 seg", 45),
        ("1 dia", DAY),
        ("1時間30分", HOUR + 30 * MINUTE),
        ("３０分", 30 * MINUTE),  # full-width digits, as a Japanese input method types them
        ("2日", 2 * DAY),
        ("15秒", 15),
    ],
)
def test_a_duration_reads_as_people_write_it(typed: str, seconds: float) -> None:
    assert parse_duration(typed) == seconds


@pytest.mark.parametrize(
    "typed",
    [
        *("", " ", "soon", "5x", "h", "1..5h", "1.5.5", "30s5", "5m-", "-5m", "1 hour ago"),
        *("1e5", "1 and 2", "1h and", "and 5m", "1h,,30m"),
    ],
)
def test_anything_else_is_refused(typed: str) -> None:
    with pytest.raises(ValueError, match="duration"):
        parse_duration(typed)
