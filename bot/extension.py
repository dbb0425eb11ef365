"""The discord.py extension :class:`bot.client.TTTBot` loads: the ``/ttt`` and ``/ttt-settings``
cogs.

discord.py runs an extension's module afresh at every load (and drops it from ``sys.modules``
when the bot closes). The cogs' class bodies build every command, signatures and annotations
read, so they live in :mod:`bot.cogs`, imported once a process: a bot started again in the same
process (a restart; the tests start about a thousand) does not build them again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.cogs.settings import SettingsCog
from bot.cogs.ttt import TicTacToeCog

if TYPE_CHECKING:
    from bot.client import TTTBot


async def setup(bot: TTTBot) -> None:
    await bot.add_cog(TicTacToeCog(bot))
    await bot.add_cog(SettingsCog(bot))
