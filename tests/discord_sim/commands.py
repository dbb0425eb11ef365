"""Turn a test's ``slash(user, channel, "ttt move", cell="B2")`` into the interaction data
Discord would send, checked against the commands the bot registered.

Discord's client only lets a user invoke commands that exist, with options that exist, of
the right type, within choices and bounds, with every required option filled. The sim does
the same checks and raises :class:`SimUsageError` when a test asks for something a real user
could not do, which is how a bot test notices a command-definition mistake.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from .models import (
    JSON,
    PERM_ADMINISTRATOR,
    SimChannel,
    SimGuild,
    SimMember,
    SimRole,
    SimUsageError,
    SimUser,
)

OPTION_TYPE_NAMES = {
    1: "subcommand",
    2: "subcommand group",
    3: "string",
    4: "integer",
    5: "boolean",
    6: "user",
    7: "channel",
    8: "role",
    9: "mentionable",
    10: "number",
    11: "attachment",
}
MAX_SAFE_INTEGER = 2**53


@dataclass
class Resolver:
    """How option values that name Discord objects become ids and resolved data."""

    guild: SimGuild | None
    user_by_id: Callable[[int], SimUser | None]
    channel_by_id: Callable[[int], SimChannel | None]
    role_by_id: Callable[[int], SimRole | None]
    resolved: JSON = field(default_factory=dict)

    def add_user(self, user: SimUser) -> None:
        self.resolved.setdefault("users", {})[str(user.id)] = user.payload()
        member = self.guild.member(user) if self.guild else None
        if member is not None:
            data = member.payload(with_user=False, with_permissions=True)
            self.resolved.setdefault("members", {})[str(user.id)] = data

    def add_channel(self, channel: SimChannel, permissions: int) -> None:
        data = channel.payload()
        data["permissions"] = str(permissions)
        self.resolved.setdefault("channels", {})[str(channel.id)] = data

    def add_role(self, role: SimRole) -> None:
        self.resolved.setdefault("roles", {})[str(role.id)] = role.payload()


def find_command(commands: list[JSON], name: str) -> JSON | None:
    for command in commands:
        if command.get("name") == name and int(command.get("type", 1)) == 1:
            return command
    return None


def check_can_invoke(
    command: JSON, member: SimMember | None, *, context: int, installs: Collection[int]
) -> list[int]:
    """Raise if Discord would hide the command from this user in this place; else the
    installation types (of ``installs``, those that reach this place) that authorize it.

    ``context`` is where it is used (0 a guild, 1 the bot's DM, 2 a group DM or a DM between
    users). A command without ``integration_types`` is for guild installs only, and one
    without ``contexts`` is for guilds and the bot's DM (unless ``dm_permission`` is false),
    as Discord treats commands registered before either field existed.
    """
    name = command["name"]
    contexts = command.get("contexts")
    if contexts is None:
        contexts = [0] if command.get("dm_permission") is False else [0, 1]
    if context not in contexts:
        where = {0: "a guild", 1: "the bot's DM", 2: "a group DM or a DM between users"}
        raise SimUsageError(
            f"/{name} is not available in {where.get(context, context)} (contexts={contexts})"
        )
    integration_types = command.get("integration_types") or [0]
    authorizing = [kind for kind in installs if kind in integration_types]
    if not authorizing:
        raise SimUsageError(
            f"/{name} cannot be used here: the app is installed here as {sorted(installs)} "
            f"(0 guild, 1 user) and the command is for {integration_types}"
        )
    required = command.get("default_member_permissions")
    if required is None or member is None:
        return authorizing
    need = int(required)
    have = member.permissions
    if have & PERM_ADMINISTRATOR:
        return authorizing
    if need == 0 or have & need != need:
        raise SimUsageError(
            f"{member.user.name} cannot use /{name}: it needs permissions {need} "
            f"(default_member_permissions) and the member has {have}"
        )
    return authorizing


def build_command_data(
    command: JSON,
    path: list[str],
    values: Mapping[str, Any],
    resolver: Resolver,
    *,
    channel_permissions: Callable[[SimChannel], int],
    focused: str | None = None,
) -> JSON:
    """The ``data`` object of an APPLICATION_COMMAND (or autocomplete) interaction."""
    root = command["name"]
    full = " ".join([root, *path])
    definitions: list[JSON] = command.get("options") or []
    nest: list[tuple[str, int]] = []
    for part in path:
        sub = next((o for o in definitions if o.get("name") == part), None)
        if sub is None or int(sub.get("type", 0)) not in (1, 2):
            known = [o["name"] for o in definitions if int(o.get("type", 0)) in (1, 2)]
            raise SimUsageError(f"/{full}: no subcommand {part!r} (registered: {known})")
        nest.append((part, int(sub["type"])))
        definitions = sub.get("options") or []
    if any(int(o.get("type", 0)) in (1, 2) for o in definitions):
        known = [o["name"] for o in definitions]
        raise SimUsageError(f"/{full} is a command group; name one of its subcommands: {known}")
    if nest and nest[-1][1] == 2:
        raise SimUsageError(f"/{full} is a subcommand group; name one of its subcommands")

    by_name = {o["name"]: o for o in definitions}
    unknown = [k for k in values if k not in by_name]
    if unknown:
        raise SimUsageError(
            f"/{full} has no option(s) {unknown}; registered options: {list(by_name)}"
        )
    if focused is not None:
        if focused not in by_name:
            raise SimUsageError(f"/{full}: focused option {focused!r} does not exist")
        if not by_name[focused].get("autocomplete"):
            raise SimUsageError(f"/{full}: option {focused!r} is not registered with autocomplete")
    else:
        missing = [o["name"] for o in definitions if o.get("required") and o["name"] not in values]
        if missing:
            raise SimUsageError(f"/{full}: required option(s) {missing} not given")

    options: list[JSON] = []
    for definition in definitions:
        name = definition["name"]
        if name not in values and name != focused:
            continue
        raw = values.get(name, "")
        otype = int(definition["type"])
        if name == focused:
            # Discord sends whatever the user has typed so far, unvalidated and unresolved.
            options.append({"name": name, "type": otype, "value": raw, "focused": True})
            continue
        value = _convert(full, definition, raw, resolver, channel_permissions)
        options.append({"name": name, "type": otype, "value": value})

    for part, ptype in reversed(nest):
        options = [{"name": part, "type": ptype, "options": options}]
    data: JSON = {"id": command["id"], "name": root, "type": 1, "options": options}
    if focused is None and resolver.resolved:
        data["resolved"] = resolver.resolved
    if command.get("guild_id"):
        data["guild_id"] = command["guild_id"]
    return data


def _convert(
    full: str,
    definition: JSON,
    value: Any,
    resolver: Resolver,
    channel_permissions: Callable[[SimChannel], int],
) -> Any:
    name = definition["name"]
    otype = int(definition["type"])
    where = f"/{full} option {name!r} ({OPTION_TYPE_NAMES.get(otype, otype)})"

    def fail(why: str) -> SimUsageError:
        return SimUsageError(f"{where}: {why}, got {value!r}")

    if otype == 3:
        if not isinstance(value, str):
            raise fail("expects a str")
        if not definition.get("min_length", 0) <= len(value) <= definition.get("max_length", 6000):
            raise fail("length is outside min_length/max_length")
    elif otype == 4:
        if not isinstance(value, int) or isinstance(value, bool):
            raise fail("expects an int")
        if not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            raise fail("is outside Discord's integer range")
    elif otype == 10:
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise fail("expects a number")
    elif otype == 5:
        if not isinstance(value, bool):
            raise fail("expects a bool")
    elif otype in (6, 9):
        user = _as_user(value, resolver)
        if user is not None:
            resolver.add_user(user)
            return str(user.id)
        role = _as_role(value, resolver) if otype == 9 else None
        if role is None:
            raise fail("expects a SimUser (or a user id)" + (" or a SimRole" if otype == 9 else ""))
        resolver.add_role(role)
        return str(role.id)
    elif otype == 7:
        channel = value if isinstance(value, SimChannel) else None
        if isinstance(value, int) and not isinstance(value, bool):
            channel = resolver.channel_by_id(value)
        if channel is None:
            raise fail("expects a SimChannel (or a channel id)")
        allowed = definition.get("channel_types")
        if allowed and channel.type not in allowed:
            raise fail(f"channel type {channel.type} is not in channel_types {allowed}")
        resolver.add_channel(channel, channel_permissions(channel))
        return str(channel.id)
    elif otype == 8:
        role = _as_role(value, resolver)
        if role is None:
            raise fail("expects a SimRole (or a role id)")
        resolver.add_role(role)
        return str(role.id)
    else:
        raise fail("is not supported by the simulator")

    if otype in (4, 10):
        low, high = definition.get("min_value"), definition.get("max_value")
        if (low is not None and value < low) or (high is not None and value > high):
            raise fail(f"must be within [{low}, {high}]")
    choices = definition.get("choices")
    if choices and value not in [c["value"] for c in choices]:
        raise fail(f"must be one of the choices {[c['value'] for c in choices]}")
    return value


def _as_user(value: Any, resolver: Resolver) -> SimUser | None:
    if isinstance(value, SimUser):
        return value
    if isinstance(value, SimMember):
        return value.user
    if isinstance(value, int) and not isinstance(value, bool):
        return resolver.user_by_id(value)
    return None


def _as_role(value: Any, resolver: Resolver) -> SimRole | None:
    if isinstance(value, SimRole):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return resolver.role_by_id(value)
    return None
