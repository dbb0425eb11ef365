"""Discord's validation rules for what a bot sends, as pure functions.

Each ``check_*`` function returns a list of human-readable problems (empty when Discord would
accept the payload). The server turns a non-empty list into a recorded violation and the
400 "Invalid Form Body" reply Discord would give, so both the test and the bot see it.
Limits follow Discord's documentation for messages, embeds, components, application commands,
autocomplete choices and modals.
"""

from __future__ import annotations

import re
from typing import Any

from .models import FLAG_COMPONENTS_V2, JSON

MAX_CONTENT = 2000
# Files on one message, and the size of each: Discord's "attachments" limit (10), and a bot's
# upload limit where no boost raises it, the one the sim's interactions announce as
# ``attachment_size_limit`` (10 MiB, Discord's default since 2024; a bigger file gets 413 with
# code 40005, "Request entity too large").
MAX_ATTACHMENTS = 10
ATTACHMENT_SIZE_LIMIT = 10 * 1024 * 1024
# How a problem with a file's size starts: Discord answers it with 413, not 400.
TOO_LARGE = "file"
MAX_EMBEDS = 10
MAX_EMBED_TOTAL = 6000
MAX_ACTION_ROWS = 5
MAX_ROW_BUTTONS = 5
MAX_CUSTOM_ID = 100
MAX_BUTTON_LABEL = 80
# Components v2 (the IS_COMPONENTS_V2 message flag). Discord's component reference
# (discord.com/developers/docs/components/reference, "Component Reference"; the same text at
# docs.discord.food/resources/components): with the flag, "content and embeds fields will no
# longer work", "Messages allow up to 40 total components", "The combined length of all text
# across all components cannot exceed 4000 characters" (text displays hold the text; the
# OpenAPI TextDisplayComponentForMessageRequest caps one at 4000 too), and "Once a message has
# been sent with this flag, it can't be removed from the message."
MAX_V2_COMPONENTS = 40
MAX_V2_TEXT = 4000
# Which component may stand where, from the vendored OpenAPI document's request schemas:
# MessageCreateRequest.components (top level), ContainerComponentForMessageRequest.components,
# SectionComponentForMessageRequest (1 to 3 text displays; a button or thumbnail accessory).
V2_TOP_LEVEL = {1, 9, 10, 12, 13, 14, 17}
V2_IN_CONTAINER = {1, 9, 10, 12, 13, 14}
V2_ACCESSORY = {2, 11}
MAX_SECTION_TEXTS = 3
MAX_CHOICES = 25
# A slash command's names, descriptions and choices, counted together: "Slash commands can have a
# maximum of 8000 characters for combined name, description, and value properties for each
# command, its options (including subcommands and groups), and choices. When localization fields
# are present, only the longest localization for each field (including the default value) is
# counted towards the size limit." (discord-api-docs, docs/interactions/application-commands,
# "Slash Commands"; 4000 until discord-api-docs#6668, 2024-02).
MAX_COMMAND_CHARS = 8000
MAX_COMMANDS = 100
MAX_MENU_COMMANDS = 5

SELECT_TYPES = {3, 5, 6, 7, 8}
_COMMAND_NAME = re.compile(r"^[-_'\w]{1,32}$")


def _length(value: Any) -> int:
    return len(value) if isinstance(value, str) else 0


def check_message(data: JSON, *, require_content: bool = True) -> list[str]:
    """Problems with a message body as Discord stores it (after merging an edit).

    ``data`` holds ``content``, ``embeds``, ``components``, ``flags``, ``attachments`` and
    ``allowed_mentions``, and for an edit ``cleared_flags``, the bits it tried to clear that
    Discord keeps. ``require_content`` is False for the empty "thinking" message of
    a deferred response.
    """
    problems: list[str] = []
    content = data.get("content") or ""
    if not isinstance(content, str):
        problems.append(f"content must be a string, got {type(content).__name__}")
        content = str(content)
    if len(content) > MAX_CONTENT:
        problems.append(f"content is {len(content)} characters; the limit is {MAX_CONTENT}")
    embeds = data.get("embeds") or []
    problems += check_embeds(embeds)
    flags = int(data.get("flags") or 0)
    components = data.get("components") or []
    problems += check_components(components, v2=bool(flags & FLAG_COMPONENTS_V2))
    if flags & FLAG_COMPONENTS_V2 and (content or embeds):
        problems.append("a components-v2 message cannot also have content or embeds")
    if int(data.get("cleared_flags") or 0) & FLAG_COMPONENTS_V2:
        problems.append("an edit cannot remove the components-v2 flag from a message")
    problems += check_allowed_mentions(data.get("allowed_mentions"))
    problems += check_attachments(data.get("attachments") or [])
    has_body = bool(content.strip() or embeds or components or data.get("attachments"))
    if require_content and not has_body:
        problems.append("cannot send an empty message (no content, embeds, components or files)")
    return problems


def check_attachments(attachments: list[JSON]) -> list[str]:
    """A message's files: at most :data:`MAX_ATTACHMENTS`, each uploaded one (those with a
    ``size``) within :data:`ATTACHMENT_SIZE_LIMIT` bytes."""
    problems = []
    if len(attachments) > MAX_ATTACHMENTS:
        problems.append(f"{len(attachments)} attachments; the limit is {MAX_ATTACHMENTS}")
    for attachment in attachments:
        size = attachment.get("size") if isinstance(attachment, dict) else None
        if isinstance(size, int) and size > ATTACHMENT_SIZE_LIMIT:
            problems.append(
                f"{TOO_LARGE} {attachment.get('filename')!r} is {size} bytes; the upload limit "
                f"is {ATTACHMENT_SIZE_LIMIT}"
            )
    return problems


def check_embeds(embeds: Any) -> list[str]:
    if not isinstance(embeds, list):
        return [f"embeds must be a list, got {type(embeds).__name__}"]
    problems: list[str] = []
    if len(embeds) > MAX_EMBEDS:
        problems.append(f"{len(embeds)} embeds; the limit is {MAX_EMBEDS}")
    total = 0
    for index, embed in enumerate(embeds):
        where = f"embeds[{index}]"
        if not isinstance(embed, dict):
            problems.append(f"{where} must be an object")
            continue
        limits = {"title": 256, "description": 4096}
        for key, limit in limits.items():
            n = _length(embed.get(key))
            total += n
            if n > limit:
                problems.append(f"{where}.{key} is {n} characters; the limit is {limit}")
        footer = embed.get("footer") or {}
        n = _length(footer.get("text"))
        total += n
        if n > 2048:
            problems.append(f"{where}.footer.text is {n} characters; the limit is 2048")
        author = embed.get("author") or {}
        n = _length(author.get("name"))
        total += n
        if n > 256:
            problems.append(f"{where}.author.name is {n} characters; the limit is 256")
        fields = embed.get("fields") or []
        if len(fields) > 25:
            problems.append(f"{where} has {len(fields)} fields; the limit is 25")
        for fi, fld in enumerate(fields):
            name, value = fld.get("name"), fld.get("value")
            if not name or not value:
                problems.append(f"{where}.fields[{fi}] needs a non-empty name and value")
            total += _length(name) + _length(value)
            if _length(name) > 256:
                problems.append(f"{where}.fields[{fi}].name is over 256 characters")
            if _length(value) > 1024:
                problems.append(f"{where}.fields[{fi}].value is over 1024 characters")
        color = embed.get("color")
        if color is not None and not (isinstance(color, int) and 0 <= color <= 0xFFFFFF):
            problems.append(f"{where}.color {color!r} is not an RGB integer")
    if total > MAX_EMBED_TOTAL:
        problems.append(f"embeds hold {total} characters in total; the limit is {MAX_EMBED_TOTAL}")
    return problems


def check_components(components: Any, *, v2: bool = False) -> list[str]:
    if not isinstance(components, list):
        return [f"components must be a list, got {type(components).__name__}"]
    problems: list[str] = []
    if v2:
        problems += _check_layout(components)
    else:
        if len(components) > MAX_ACTION_ROWS:
            problems.append(f"{len(components)} action rows; the limit is {MAX_ACTION_ROWS}")
        for index, row in enumerate(components):
            if not isinstance(row, dict) or row.get("type") != 1:
                problems.append(
                    f"components[{index}] must be an action row (type 1) unless the message "
                    "sets the components-v2 flag"
                )
                continue
            problems += _check_row(row, f"components[{index}]")
    seen: dict[str, int] = {}
    for comp in _walk(components):
        custom_id = comp.get("custom_id")
        if custom_id is None:
            continue
        if not isinstance(custom_id, str) or not 1 <= len(custom_id) <= MAX_CUSTOM_ID:
            length = len(custom_id) if isinstance(custom_id, str) else "non-string"
            problems.append(
                f"custom_id {custom_id!r} is {length} characters; it must be 1 to {MAX_CUSTOM_ID}"
            )
        seen[str(custom_id)] = seen.get(str(custom_id), 0) + 1
    for custom_id, count in seen.items():
        if count > 1:
            problems.append(f"custom_id {custom_id!r} is used {count} times in one message")
    for comp in _walk(components):
        if comp.get("type") == 2:
            problems += _check_button(comp)
        elif comp.get("type") in SELECT_TYPES:
            problems += _check_select(comp)
    return problems


def _check_layout(components: list[Any]) -> list[str]:
    """A components-v2 layout's shape and totals; custom_ids, buttons and selects are checked
    with the classic ones."""
    problems: list[str] = []
    count = sum(1 for _ in _walk(components))
    if count > MAX_V2_COMPONENTS:
        problems.append(f"{count} components; the components-v2 limit is {MAX_V2_COMPONENTS}")
    text = sum(_length(c.get("content")) for c in _walk(components) if c.get("type") == 10)
    if text > MAX_V2_TEXT:
        problems.append(
            f"text displays hold {text} characters; the components-v2 limit is {MAX_V2_TEXT}"
        )
    for index, comp in enumerate(components):
        problems += _check_layout_item(comp, f"components[{index}]", V2_TOP_LEVEL)
    return problems


def _check_layout_item(comp: Any, where: str, allowed: set[int]) -> list[str]:
    if not isinstance(comp, dict) or comp.get("type") not in allowed:
        kind = comp.get("type") if isinstance(comp, dict) else type(comp).__name__
        return [f"{where} is a component of type {kind!r}, which cannot stand there"]
    kind = comp["type"]
    children = comp.get("components")
    if kind == 1:
        # The classic per-row rules hold inside a layout as well (5 buttons, a select alone).
        return _check_row(comp, where)
    if kind == 17:
        if not isinstance(children, list) or not children:
            return [f"{where} is an empty container"]
        problems: list[str] = []
        for index, child in enumerate(children):
            problems += _check_layout_item(child, f"{where}.components[{index}]", V2_IN_CONTAINER)
        return problems
    if kind == 9:
        problems = []
        texts = children if isinstance(children, list) else []
        if not 1 <= len(texts) <= MAX_SECTION_TEXTS or any(
            not isinstance(t, dict) or t.get("type") != 10 for t in texts
        ):
            problems.append(f"{where} must hold 1 to {MAX_SECTION_TEXTS} text displays")
        accessory = comp.get("accessory")
        if not isinstance(accessory, dict) or accessory.get("type") not in V2_ACCESSORY:
            problems.append(f"{where} needs a button or thumbnail accessory")
        return problems
    if kind == 10 and not (isinstance(comp.get("content"), str) and comp["content"]):
        return [f"{where} is a text display without content"]
    return []


def _check_row(row: JSON, where: str) -> list[str]:
    children = row.get("components") or []
    if not children:
        return [f"{where} is an empty action row"]
    types = [c.get("type") for c in children]
    problems = []
    if any(t in SELECT_TYPES for t in types) and len(children) > 1:
        problems.append(f"{where} mixes a select menu with other components")
    buttons = sum(1 for t in types if t == 2)
    if buttons > MAX_ROW_BUTTONS:
        problems.append(f"{where} has {buttons} buttons; the limit is {MAX_ROW_BUTTONS} per row")
    if len(children) > MAX_ROW_BUTTONS:
        problems.append(f"{where} has {len(children)} components; the limit is 5")
    return problems


def _check_button(button: JSON) -> list[str]:
    style = button.get("style")
    name = button.get("custom_id") or button.get("url") or button.get("label")
    where = f"button {name!r}"
    problems = []
    if style not in (1, 2, 3, 4, 5, 6):
        problems.append(f"{where} has invalid style {style!r}")
    if style == 5:
        if not button.get("url") or button.get("custom_id"):
            problems.append(f"{where}: a link button needs a url and no custom_id")
    elif style == 6:
        if not button.get("sku_id"):
            problems.append(f"{where}: a premium button needs a sku_id")
    elif not button.get("custom_id"):
        problems.append(f"{where} needs a custom_id")
    label = button.get("label")
    if style != 6 and not label and not button.get("emoji"):
        problems.append(f"{where} needs a label or an emoji")
    if _length(label) > MAX_BUTTON_LABEL:
        problems.append(f"{where} label is {_length(label)} characters; the limit is 80")
    return problems


def _check_select(select: JSON) -> list[str]:
    where = f"select {select.get('custom_id')!r}"
    problems = []
    options = select.get("options")
    if select.get("type") == 3:
        if not options or len(options) > 25:
            problems.append(f"{where} needs 1 to 25 options")
        for opt in options or []:
            for key in ("label", "value", "description"):
                if _length(opt.get(key)) > 100:
                    problems.append(f"{where} option {key} is over 100 characters")
    if _length(select.get("placeholder")) > 150:
        problems.append(f"{where} placeholder is over 150 characters")
    lo, hi = select.get("min_values", 1), select.get("max_values", 1)
    if not (0 <= lo <= 25 and 1 <= hi <= 25 and lo <= hi):
        problems.append(f"{where} has invalid min_values/max_values {lo}/{hi}")
    return problems


def check_allowed_mentions(allowed: Any) -> list[str]:
    if allowed is None:
        return []
    if not isinstance(allowed, dict):
        return ["allowed_mentions must be an object"]
    problems = []
    parse = allowed.get("parse", [])
    for kind in parse:
        if kind not in ("users", "roles", "everyone"):
            problems.append(f"allowed_mentions.parse has unknown kind {kind!r}")
    for kind in ("users", "roles"):
        ids = allowed.get(kind) or []
        if kind in parse and ids:
            problems.append(f"allowed_mentions lists {kind} while also parsing {kind}")
        if len(ids) > 100:
            problems.append(f"allowed_mentions.{kind} has more than 100 ids")
    return problems


def pinged_users(mentioned: list[int], allowed: JSON | None) -> list[int]:
    """The users a new message notifies: its mentions, filtered by allowed_mentions."""
    if allowed is None:
        return mentioned
    if "users" in allowed.get("parse", []):
        return mentioned
    permitted = {int(u) for u in allowed.get("users") or []}
    return [uid for uid in mentioned if uid in permitted]


def check_choices(choices: Any) -> list[str]:
    if not isinstance(choices, list):
        return ["autocomplete choices must be a list"]
    problems = []
    if len(choices) > MAX_CHOICES:
        problems.append(f"{len(choices)} autocomplete choices; the limit is {MAX_CHOICES}")
    for index, choice in enumerate(choices):
        name, value = choice.get("name"), choice.get("value")
        if not isinstance(name, str) or not 1 <= len(name) <= 100:
            problems.append(f"choices[{index}].name must be 1 to 100 characters")
        if isinstance(value, str) and len(value) > 100:
            problems.append(f"choices[{index}].value is over 100 characters")
        elif not isinstance(value, (str, int, float)) or isinstance(value, bool):
            problems.append(f"choices[{index}].value must be a string or a number")
    return problems


def check_modal(data: Any) -> list[str]:
    if not isinstance(data, dict):
        return ["a modal response needs data"]
    problems = []
    custom_id = data.get("custom_id")
    if not isinstance(custom_id, str) or not 1 <= len(custom_id) <= MAX_CUSTOM_ID:
        problems.append(f"modal custom_id {custom_id!r} must be 1 to {MAX_CUSTOM_ID} characters")
    title = data.get("title")
    if not isinstance(title, str) or not 1 <= len(title) <= 45:
        problems.append(f"modal title {title!r} must be 1 to 45 characters")
    components = data.get("components") or []
    if not 1 <= len(components) <= 5:
        problems.append(f"a modal needs 1 to 5 top-level components, got {len(components)}")
    ids: list[str] = []
    for comp in _walk(components):
        if comp.get("type") == 4:
            ids.append(str(comp.get("custom_id")))
            for key, limit in (("label", 45), ("placeholder", 100), ("value", 4000)):
                if _length(comp.get(key)) > limit:
                    problems.append(f"text input {comp.get('custom_id')!r} {key} is over {limit}")
    if len(ids) != len(set(ids)):
        problems.append("modal text inputs repeat a custom_id")
    return problems


def check_commands(commands: Any, *, guild: bool) -> list[str]:
    """Problems with a bulk-overwrite (``tree.sync()``) payload."""
    if not isinstance(commands, list):
        return ["the command list must be a JSON array"]
    problems: list[str] = []
    seen: set[tuple[int, str]] = set()
    counts = {1: 0, 2: 0, 3: 0}
    for command in commands:
        ctype = int(command.get("type", 1))
        name = command.get("name", "")
        counts[ctype] = counts.get(ctype, 0) + 1
        if (ctype, name) in seen:
            problems.append(f"command {name!r} is defined twice")
        seen.add((ctype, name))
        problems += check_command(command)
    if counts[1] > MAX_COMMANDS:
        problems.append(f"{counts[1]} slash commands; the limit is {MAX_COMMANDS}")
    for ctype in (2, 3):
        if counts.get(ctype, 0) > MAX_MENU_COMMANDS:
            problems.append(f"{counts[ctype]} context menus of type {ctype}; the limit is 5")
    del guild  # the same limits apply to guild and global commands
    return problems


def check_command(command: JSON) -> list[str]:
    ctype = int(command.get("type", 1))
    name = command.get("name")
    where = f"command {name!r}"
    problems: list[str] = []
    if not isinstance(name, str):
        return [f"{where} has no name"]
    description = command.get("description", "")
    if ctype == 1:
        problems += _check_name(name, where)
        if not isinstance(description, str) or not 1 <= len(description) <= 100:
            problems.append(f"{where} description must be 1 to 100 characters")
        problems += _check_localized(command, where)
    else:
        if not 1 <= len(name) <= 32:
            problems.append(f"{where} name must be 1 to 32 characters")
        if description:
            problems.append(f"{where}: context menu commands take an empty description")
    perms = command.get("default_member_permissions")
    valid_perms = isinstance(perms, int) and not isinstance(perms, bool) and perms >= 0
    if perms is not None and not valid_perms and not (isinstance(perms, str) and perms.isdigit()):
        problems.append(f"{where}: default_member_permissions must be a permission integer")
    options = command.get("options") or []
    if ctype != 1 and options:
        problems.append(f"{where}: context menu commands take no options")
    problems += _check_options(options, where, depth=0)
    chars = _command_chars(command)
    if chars > MAX_COMMAND_CHARS:
        problems.append(
            f"{where} uses {chars} characters of names, descriptions and choices (each field's "
            f"longest localization counted); the limit is {MAX_COMMAND_CHARS}"
        )
    return problems


def _check_name(name: str, where: str) -> list[str]:
    if not _COMMAND_NAME.match(name) or name != name.lower():
        return [f"{where}: name {name!r} must be 1 to 32 lowercase letters, digits, - or _"]
    return []


def _check_options(options: list[JSON], where: str, *, depth: int) -> list[str]:
    problems: list[str] = []
    if len(options) > 25:
        problems.append(f"{where} has {len(options)} options; the limit is 25")
    names = [o.get("name") for o in options]
    if len(names) != len(set(names)):
        problems.append(f"{where} repeats an option name")
    kinds = {int(o.get("type", 0)) for o in options}
    if kinds & {1, 2} and kinds - {1, 2}:
        problems.append(f"{where} mixes subcommands with ordinary options")
    seen_optional = False
    for opt in options:
        otype = int(opt.get("type", 0))
        oname = str(opt.get("name"))
        owhere = f"{where} option {oname!r}"
        problems += _check_name(oname, owhere)
        desc = opt.get("description")
        if not isinstance(desc, str) or not 1 <= len(desc) <= 100:
            problems.append(f"{owhere} description must be 1 to 100 characters")
        problems += _check_localized(opt, owhere)
        if otype not in range(1, 12):
            problems.append(f"{owhere} has invalid type {otype}")
        if otype in (1, 2):
            if (otype == 2 and depth > 0) or (otype == 1 and depth > 1):
                problems.append(f"{owhere} nests subcommands too deeply")
            sub = opt.get("options") or []
            if otype == 2 and any(int(s.get("type", 0)) != 1 for s in sub):
                problems.append(f"{owhere}: a subcommand group may only hold subcommands")
            problems += _check_options(sub, owhere, depth=depth + 1)
            continue
        if opt.get("required"):
            if seen_optional:
                problems.append(f"{owhere} is required but follows an optional option")
        else:
            seen_optional = True
        choices = opt.get("choices") or []
        if choices and opt.get("autocomplete"):
            problems.append(f"{owhere} cannot have both choices and autocomplete")
        if choices and otype not in (3, 4, 10):
            problems.append(f"{owhere}: only string, integer and number options take choices")
        problems += [f"{owhere}: {p}" for p in check_choices(choices)] if choices else []
        if ("min_value" in opt or "max_value" in opt) and otype not in (4, 10):
            problems.append(f"{owhere}: min_value/max_value only apply to numbers")
        if ("min_length" in opt or "max_length" in opt) and otype != 3:
            problems.append(f"{owhere}: min_length/max_length only apply to strings")
        if opt.get("channel_types") and otype != 7:
            problems.append(f"{owhere}: channel_types only apply to channel options")
    return problems


def _check_localized(item: JSON, where: str) -> list[str]:
    """A slash command's or option's translations follow the rules of what they translate: a
    name's characters and length, a description's 1 to 100 characters."""
    problems: list[str] = []
    names = item.get("name_localizations") or {}
    descriptions = item.get("description_localizations") or {}
    for locale, name in names.items() if isinstance(names, dict) else ():
        problems += _check_name(str(name), f"{where} ({locale})")
    for locale, text in descriptions.items() if isinstance(descriptions, dict) else ():
        if not isinstance(text, str) or not 1 <= len(text) <= 100:
            problems.append(f"{where} description ({locale}) must be 1 to 100 characters")
    return problems


def _command_chars(command: JSON) -> int:
    """A command's (or option's) characters as Discord counts them against
    :data:`MAX_COMMAND_CHARS`: each name and description by its longest localization."""
    total = _longest(command, "name") + _longest(command, "description")
    for opt in command.get("options") or []:
        total += _command_chars(opt)
        for choice in opt.get("choices") or []:
            total += _longest(choice, "name") + len(str(choice.get("value", "")))
    return total


def _longest(item: JSON, key: str) -> int:
    """The length of ``item[key]`` or of its longest localization (``key_localizations``)."""
    localized = item.get(f"{key}_localizations")
    texts = [item.get(key), *(localized.values() if isinstance(localized, dict) else ())]
    return max(_length(text) for text in texts)


def _walk(components: list[JSON]) -> list[JSON]:
    out: list[JSON] = []
    for comp in components:
        if not isinstance(comp, dict):
            continue
        out.append(comp)
        children = comp.get("components")
        if isinstance(children, list):
            out += _walk(children)
        for key in ("component", "accessory"):
            child = comp.get(key)
            if isinstance(child, dict):
                out += _walk([child])
    return out
