"""The link that adds the bot to a server, and what to fix when the Discord application is set
up wrong, each in one line.

Discord tells a bot, from its token alone, which application it is and in how many servers
that application is (``approximate_guild_count``): the bot asks no gateway intent, so it is
never told of the servers themselves. What goes wrong, and what the bot can see of it:

* a token Discord rejects: the login fails (401);
* the token of another application than the one invited: this one is in no server, which the
  bot logs at start-up with this one's link; with ``TTT_GUILD_ID``, Discord refuses its
  commands in that server (403), and the server does not know the application either;
* an application added to a server without the ``applications.commands`` scope: with
  ``TTT_GUILD_ID``, Discord refuses its commands there (403 Missing Access) although the
  server knows the application;
* under ``python -m bot serve``, a ``DISCORD_PUBLIC_KEY`` of another application: the
  application's own (``verify_key``) differs, and the bot stops before it opens the database;
* an Interactions Endpoint URL that does not fit the front door: set while the gateway bot
  runs (Discord sends it no interaction), or not yet set under ``serve``. The bot logs it at
  start-up, in place of discord.py's warning, which speaks to its gateway users alone.
"""

from __future__ import annotations

import asyncio
import logging
from urllib.parse import urlencode

import discord

from bot.config import ConfigError
from bot.permissions import INVITE_PERMISSIONS

log = logging.getLogger(__name__)


class _EndpointUrlWarning(logging.Filter):
    """Drops discord.py's warning at login that the application has an Interactions Endpoint
    URL: under ``serve`` that is the point, and over the gateway :func:`log_front_door` says
    what it means for the bot instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Application has an interaction endpoint URL")


# Here rather than on the bot: ``python -m bot invite`` logs in too.
logging.getLogger("discord.client").addFilter(_EndpointUrlWarning())

# The bot user in the server, and its slash commands there.
SCOPES = ("bot", "applications.commands")
# Discord's installation context for a server (1 is a member's own account).
GUILD_INSTALL = 0
AUTHORIZE_URL = "https://discord.com/oauth2/authorize"
# How long ``python -m bot invite`` waits for Discord's answer.
PATIENCE = 30.0

REJECTED_TOKEN = (
    "Discord rejected DISCORD_TOKEN (401 Unauthorized): check the token, or reset it on the "
    "Bot page of the application in the developer portal and copy the new one"
)


def invite_link(application_id: int) -> str:
    """The link that adds the application to a server: its bot with the permissions the bot
    needs, and its commands."""
    query = {
        "client_id": application_id,
        "permissions": INVITE_PERMISSIONS.value,
        "integration_type": GUILD_INSTALL,
        "scope": " ".join(SCOPES),
    }
    return f"{AUTHORIZE_URL}?{urlencode(query)}"


async def fetch_application(token: str) -> discord.AppInfo:
    """The application ``token`` belongs to, asked of Discord as the bot's own login does
    (``GET /users/@me``, then ``GET /oauth2/applications/@me``). Raises what the login raises:
    ``discord.LoginFailure`` for a rejected token, ``aiohttp.ClientError`` or ``OSError`` when
    Discord cannot be reached, ``TimeoutError`` after :data:`PATIENCE` seconds."""
    client = discord.Client(intents=discord.Intents.none())
    async with client:
        await asyncio.wait_for(client.login(token), PATIENCE)
        application = client.application
    assert application is not None  # login sets it
    return application


def _named(application: discord.AppInfo) -> str:
    return f"the application {application.name} (id {application.id})"


def in_no_server(application: discord.AppInfo) -> str | None:
    """The start-up line for an application in no server yet; None once it is in one."""
    if application.approximate_guild_count > 0:
        return None
    return (
        f"{_named(application)} is in no server yet: invite it with "
        f"{invite_link(application.id)} (if you invited another application, DISCORD_TOKEN is "
        "not its token: put that one's token there, or invite this one)"
    )


def log_if_in_no_server(application: discord.AppInfo | None) -> None:
    """Log :func:`in_no_server`'s line, if there is one (``application`` is the login's)."""
    line = None if application is None else in_no_server(application)
    if line is not None:
        log.info("%s", line)


def log_front_door(application: discord.AppInfo | None, over_http: bool) -> None:
    """Log where Discord sends the application's interactions, when it matters: over the
    gateway a URL means this process gets none (a WARNING); under ``serve`` the URL, or that
    there is none yet (INFO: the operator sets it once the bot answers)."""
    if application is None:
        return
    url = application.interactions_endpoint_url
    if over_http and url is None:
        log.info(
            "%s has no Interactions Endpoint URL yet: Discord sends its interactions over the "
            "gateway until it is set to this bot's https://.../interactions on the General "
            "Information page of the developer portal",
            _named(application),
        )
    elif over_http:
        log.info(
            "%s has its Interactions Endpoint URL at %s: Discord POSTs its interactions there",
            _named(application),
            url,
        )
    elif url is not None:
        log.warning(
            "%s has an Interactions Endpoint URL, %s: Discord POSTs every interaction there and "
            "sends none over the gateway, so this process answers none; clear the URL on the "
            "General Information page of the developer portal, or run `python -m bot serve` "
            "behind it",
            _named(application),
            url,
        )


def check_public_key(application: discord.AppInfo | None, public_key: str | None) -> None:
    """Under ``serve``: :class:`ConfigError` when ``DISCORD_PUBLIC_KEY`` is not the
    application's own, which would refuse every interaction Discord signs (and Discord then
    refuses the URL) with nothing but DEBUG lines to say why."""
    if application is None or public_key is None:
        return
    if application.verify_key.lower() != public_key:
        raise ConfigError(
            f"DISCORD_PUBLIC_KEY is not the Public Key of {_named(application)}, whose token "
            "DISCORD_TOKEN is: copy its Public Key from its General Information page in the "
            "developer portal (it is not secret)"
        )


async def commands_refused(
    client: discord.Client, guild_id: int, error: discord.Forbidden
) -> ConfigError:
    """What to fix when Discord refused to register the commands in the server
    ``TTT_GUILD_ID`` names (``error``): whether the application is in that server tells an
    application invited without ``applications.commands`` from one not invited there."""
    application = client.application
    assert application is not None  # login sets it
    refused = (
        f"TTT_GUILD_ID {guild_id}: Discord refused to register the commands of "
        f"{_named(application)} there ({error.status} {error.text})"
    )
    link = invite_link(application.id)
    try:
        await client.http.get_guild(guild_id)
    except (discord.Forbidden, discord.NotFound):
        return ConfigError(
            f"{refused}: it is not in that server; invite it with {link} (if you invited "
            "another application, put that one's token in DISCORD_TOKEN)"
        )
    except discord.HTTPException:
        return ConfigError(
            f"{refused}: is it in that server, with the applications.commands scope? "
            f"Invite it with {link}"
        )
    return ConfigError(
        f"{refused}: it is in that server without the applications.commands scope; invite it "
        f"again with {link}"
    )
