"""Discord's published OpenAPI document as the sim's second line of defence.

``limits.py`` holds the rules Discord really enforces, written by hand; where Discord is
stricter than its spec (5 action rows, 2,000 characters of content, ...) those stay in
charge. This module checks every REST request against the operation the spec defines for
it, so that shapes the hand-written checks do not cover are checked too. :func:`load` reads
``openapi_spec/discord-openapi.json`` once per process; :meth:`DiscordOpenAPI.check` returns
a :class:`SpecProblem` for each way a request breaks the spec.

Discord's caveats about its spec (``openapi_spec/README.md``) are applied, and nothing
looser:

* A field typed as an integer accepts a string that parses as one, still within the field's
  minimum and maximum (and an integer enum or const takes it for its value).
* Where the spec wants a snowflake string, a JSON integer is accepted: discord.py sends some
  ids that way (``allowed_mentions.users``, ``recipient_id``) and Discord takes them.
* ``anyOf`` and ``oneOf`` are checked as written. The caveats do not make a union ambiguous:
  discord.py's nonce, a string of digits, fits both the integer and the string shape of
  ``nonce`` only through the first caveat, so it counts as the one shape it fits as sent.

Query strings are read the way Discord reads them: booleans as ``true``/``True``/``1`` and
``false``/``False``/``0`` (discord.py sends ``with_response=1``), integers as int-parseable
strings, repeated keys for arrays.

The spec declares no ``additionalProperties: false``, so the extra fields discord.py always
sends (``embeds[].flags``, ``tts`` on edits) pass as they are. :data:`ALLOWANCES` is where a
spec failure that discord.py causes and Discord accepts would be excused; running the whole
suite with discord.py 2.7 needed none.
"""

from __future__ import annotations

import contextvars
import functools
import json
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, cast

import orjson
from jsonschema import Draft202012Validator, ValidationError, validators
from jsonschema.exceptions import relevance
from jsonschema.protocols import Validator
from referencing import Registry
from referencing.jsonschema import DRAFT202012

SPEC_FILE = Path(__file__).with_name("openapi_spec") / "discord-openapi.json"

# The registry holds the document under this URI, so an operation's schema is reached as
# "<uri>#<JSON pointer>" while the document's own "#/components/..." refs keep resolving
# against the whole document.
_BASE_URI = "urn:tttbot:discord-openapi"
# How many request bodies' verdicts a spec keeps (the most recently checked).
BODY_VERDICTS_KEPT = 256

_METHODS = ("get", "put", "post", "patch", "delete")

# Int-parseable: an optional minus sign and digits, none of the spaces, "+" or "_" that
# Python's int() also forgives. 64 digits is far past any integer Discord takes.
_INT_STRING = re.compile(r"-?[0-9]{1,64}")
_SNOWFLAKE_LIMIT = 2**64

# The spellings of booleans Discord takes in query strings ("Boolean Query Strings" in its
# API reference); discord.py sends "1" and "0".
_QUERY_BOOLEANS = {
    "True": True,
    "true": True,
    "1": True,
    "False": False,
    "false": False,
    "0": False,
}

# What a branch of Discord's enum-like unions ({"const": 4, "title": "..."}) holds.
_ANNOTATIONS = frozenset({"const", "title", "description"})

_EXCERPT = 60
_KIND_RULES = ("enum", "const")

# Instances a union was found to accept, remembered (with shortcuts) for each validator class:
# the same buttons, rows and embeds come back in almost every request of a test run.
_ACCEPTED_LIMIT = 100_000

# Set while a oneOf that matched several shapes is counted again with the caveats off.
_STRICT: contextvars.ContextVar[bool] = contextvars.ContextVar("openapi_strict", default=False)

JSON = dict[str, Any]


class _Validating(Protocol):
    """What keyword functions get: a jsonschema validator, with its (untyped) descend."""

    def descend(
        self,
        instance: Any,
        schema: Any,
        path: str | int | None = None,
        schema_path: str | int | None = None,
    ) -> Iterator[ValidationError]: ...

    def evolve(self, **changes: Any) -> Validator: ...


class _Referring(_Validating, Protocol):
    """A jsonschema validator as its ``$ref`` keyword sees it: with the resolver of where it
    stands (jsonschema's own ``$ref`` uses it the same way)."""

    _resolver: Any  # a referencing.Resolver (referencing does not export the class)

    def descend(
        self,
        instance: Any,
        schema: Any,
        path: str | int | None = None,
        schema_path: str | int | None = None,
        resolver: Any = None,
    ) -> Iterator[ValidationError]: ...


Keyword = Callable[[_Validating, Any, Any, JSON], Iterator[ValidationError]]


@dataclass(frozen=True)
class SpecProblem:
    """One way a request breaks the spec.

    ``route`` is the method and the spec's path template (the request's own path when no
    operation matches); ``part`` is "route", "path", "query" or "body"; ``json_path`` says
    where: ``$...`` in the body, or the parameter's name; ``rule`` is the keyword that failed
    with its value; ``excerpt`` shows the offending value.
    """

    route: str
    part: str
    json_path: str
    rule: str
    excerpt: str

    def __str__(self) -> str:
        if self.part == "route":
            return f"OpenAPI: {self.route}: {self.rule}"
        return f"OpenAPI: {self.route}: {self.part} {self.json_path}: {self.rule}: {self.excerpt}"


@dataclass(frozen=True)
class Allowance:
    """A spec failure that discord.py causes and Discord accepts. It excuses the problems on
    ``route`` and ``part`` whose JSON path matches the regular expression ``json_path`` in
    full and whose rule starts with ``rule``; ``why`` says why Discord accepts it."""

    route: str
    part: str
    json_path: str
    rule: str
    why: str

    def covers(self, problem: SpecProblem) -> bool:
        return (
            problem.route == self.route
            and problem.part == self.part
            and re.fullmatch(self.json_path, problem.json_path) is not None
            and problem.rule.startswith(self.rule)
        )


# Empty: the whole suite, run with discord.py 2.7, breaks the spec nowhere once the caveats
# above are applied. An entry goes here only for something discord.py sends that Discord's
# docs (or Discord itself) accept, with the reason in ``why``; a bot bug is fixed instead.
ALLOWANCES: tuple[Allowance, ...] = ()


# ---------------------------------------------------------------------- the caveats


def _types(schema: Mapping[str, Any]) -> set[str]:
    declared = schema.get("type")
    if isinstance(declared, str):
        return {declared}
    return set(declared or ())


def _int_string(instance: object) -> bool:
    return (
        isinstance(instance, str)
        and not _STRICT.get()
        and _INT_STRING.fullmatch(instance) is not None
    )


def _is_integer(checker: object, instance: object) -> bool:
    return Draft202012Validator.TYPE_CHECKER.is_type(instance, "integer") or _int_string(instance)


def _snowflake_int(schema: Mapping[str, Any], instance: object) -> bool:
    return (
        schema.get("format") == "snowflake"
        and type(instance) is int
        and 0 <= instance < _SNOWFLAKE_LIMIT
        and not _STRICT.get()
    )


_BASE: Mapping[str, Keyword] = Draft202012Validator.VALIDATORS


def _type(
    validator: _Validating, types: Any, instance: Any, schema: JSON
) -> Iterator[ValidationError]:
    if not _snowflake_int(schema, instance):
        yield from _BASE["type"](validator, types, instance, schema)


def _as_integer(keyword: str) -> Keyword:
    """The numeric bound ``keyword``, judging an int-parseable string by its value where the
    schema says integer (elsewhere the bound ignores strings, as written)."""
    base = _BASE[keyword]

    def check(
        validator: _Validating, value: Any, instance: Any, schema: JSON
    ) -> Iterator[ValidationError]:
        if _int_string(instance) and "integer" in _types(schema):
            instance = int(instance)
        yield from base(validator, value, instance, schema)

    return check


def _or_integer(keyword: str) -> Keyword:
    """``enum`` or ``const``, also taking an int-parseable string for an integer value. Only
    on schemas typed integer and untyped ones: the spec's untyped integer consts are the
    branches of integer-typed enums (``test_integer_consts_sit_in_integer_fields``)."""
    base = _BASE[keyword]

    def check(
        validator: _Validating, value: Any, instance: Any, schema: JSON
    ) -> Iterator[ValidationError]:
        errors = list(base(validator, value, instance, schema))
        typed = _types(schema)
        if (
            errors
            and _int_string(instance)
            and (not typed or "integer" in typed)
            and not any(True for _ in base(validator, value, int(instance), schema))
        ):
            return
        yield from errors

    return check


def _validator_class(resolve: Callable[[Any], Any], *, shortcuts: bool) -> type[Validator]:
    """Draft 2020-12 with the caveats, for one document (``resolve`` follows its refs).

    Unions are where the time goes: a component's ``type`` is a oneOf of 20 consts, and each
    component is tried against every kind of component. With ``shortcuts`` (always, but for
    the test that compares the two) an enum-like oneOf compares its consts without
    descending, and a union branch whose ``type`` property rejects the instance's ``type``
    fails on that alone, without validating the rest of the object: the verdict is the one
    the keywords give as written, twenty times faster. A union also remembers the instances
    it accepted (by their JSON, sorted): its verdict on one depends on nothing else, and a
    test run sends the same button or row again and again. And each ``$ref`` is looked up
    once, and each subschema's validator made once rather than at every step down, a third
    of the checks' time (test_discord_sim_openapi.py compares the verdicts with the keywords
    as written, where each step down is jsonschema's own).
    """
    kinds: dict[int, tuple[object, Any]] = {}
    enums: dict[int, tuple[object, frozenset[int | str] | None]] = {}
    accepted: dict[tuple[int, bool, bytes], object] = {}

    def accepted_key(branches: Sequence[Any], instance: Any) -> tuple[int, bool, bytes] | None:
        """The key under which ``branches`` remember accepting ``instance`` (None without
        shortcuts, or for an instance JSON cannot hold)."""
        if not shortcuts:
            return None
        try:
            text = orjson.dumps(instance, option=orjson.OPT_SORT_KEYS)
        except TypeError:
            return None
        return (id(branches), _STRICT.get(), text)

    def remember_accepted(key: tuple[int, bool, bytes] | None, branches: Sequence[Any]) -> None:
        if key is None:
            return
        if len(accepted) >= _ACCEPTED_LIMIT:
            accepted.clear()
        accepted[key] = branches

    def kind_schema(branch: object) -> Any:
        cached = kinds.get(id(branch))
        if cached is None or cached[0] is not branch:
            target = resolve(branch)
            props = target.get("properties") if isinstance(target, dict) else None
            cached = (branch, props.get("type") if isinstance(props, dict) else None)
            kinds[id(branch)] = cached
        return cached[1]

    def enum_values(branches: Sequence[Any]) -> frozenset[int | str] | None:
        """The values of an enum-like oneOf of distinct int or str consts, else None."""
        cached = enums.get(id(branches))
        if cached is None or cached[0] is not branches:
            values = [
                b["const"]
                for b in branches
                if isinstance(b, dict) and "const" in b and b.keys() <= _ANNOTATIONS
            ]
            plain = [v for v in values if type(v) in (int, str)]
            distinct = frozenset(plain)
            cached = (branches, distinct if len(plain) == len(branches) == len(distinct) else None)
            enums[id(branches)] = cached
        return cached[1]

    def branch_errors(
        validator: _Validating, index: int, branch: Any, instance: Any
    ) -> list[ValidationError]:
        if shortcuts and isinstance(instance, dict) and "type" in instance:
            kind = kind_schema(branch)
            if kind is not None:
                wrong = list(
                    validator.descend(instance["type"], kind, path="type", schema_path=index)
                )
                if wrong:
                    return wrong
        return list(validator.descend(instance, branch, schema_path=index))

    def any_of(
        validator: _Validating, branches: Sequence[Any], instance: Any, schema: JSON
    ) -> Iterator[ValidationError]:
        key = accepted_key(branches, instance)
        if key is not None and accepted.get(key) is branches:
            return
        errors: list[ValidationError] = []
        for index, branch in enumerate(branches):
            found = branch_errors(validator, index, branch, instance)
            if not found:
                remember_accepted(key, branches)
                return
            errors.extend(found)
        yield ValidationError(f"matches none of the {len(branches)} shapes", context=errors)

    def one_of(
        validator: _Validating, branches: Sequence[Any], instance: Any, schema: JSON
    ) -> Iterator[ValidationError]:
        values = enum_values(branches) if shortcuts else None
        if values is not None:
            # What "const" says of each branch: equal as JSON (4.0 is 4, True is not 1), and
            # an int-parseable string stands for its integer.
            hit = type(instance) in (int, float, str) and instance in values
            if not hit and _int_string(instance):
                hit = int(instance) in values
            if not hit:
                yield ValidationError(f"not one of {sorted(values, key=_order)}")
            return
        key = accepted_key(branches, instance)
        if key is not None and accepted.get(key) is branches:
            return
        matched: list[int] = []
        errors: list[ValidationError] = []
        for index, branch in enumerate(branches):
            found = branch_errors(validator, index, branch, instance)
            if found:
                errors.extend(found)
            else:
                matched.append(index)
        if not matched:
            yield ValidationError(f"matches none of the {len(branches)} shapes", context=errors)
            return
        if len(matched) == 1:
            remember_accepted(key, branches)
            return
        token = _STRICT.set(True)
        try:
            strict = [i for i in matched if validator.evolve(schema=branches[i]).is_valid(instance)]
        finally:
            _STRICT.reset(token)
        if len(strict) != 1:
            yield ValidationError(f"matches {len(matched)} shapes (branches {matched}), not one")
            return
        remember_accepted(key, branches)

    resolved_refs: dict[str, Any] = {}  # each ref's referencing.Resolved

    def ref(
        validator: _Referring, ref: str, instance: Any, schema: JSON
    ) -> Iterator[ValidationError]:
        """``$ref`` as jsonschema follows it, each ref looked up once: the document sets no
        ``$id`` and its refs are all ``#/...`` (the root's, absolute), so a ref names one
        place wherever it stands. Looking it up again each time was a fifth of the checks'
        time (Discord's components are refs in refs)."""
        found = resolved_refs.get(ref)
        if found is None:
            found = resolved_refs[ref] = validator._resolver.lookup(ref)
        yield from validator.descend(instance, found.contents, resolver=found.resolver)

    # Each subschema's validator, by the schema and the resolver of where it stands (objects
    # of the document and of its registry, which live as long as the class; kept here, so
    # their ids stay theirs): jsonschema makes a new one at every step down.
    evolved: dict[tuple[int, int], tuple[object, object, Any]] = {}

    def descend(
        validator: Any,
        instance: Any,
        schema: Any,
        path: str | int | None = None,
        schema_path: str | int | None = None,
        resolver: Any = None,
    ) -> Iterator[ValidationError]:
        """jsonschema's ``descend``, with the validator for ``schema`` made once: the same
        errors, with the same paths. A schema that could change the resolver or the draft
        (``$id``, ``$schema``; the document has neither) goes through jsonschema's own."""
        if (
            not isinstance(schema, dict)
            or "$id" in schema
            or "$schema" in schema
            or validator._ref_resolver is not None  # jsonschema's deprecated resolver
        ):
            yield from plain_descend(validator, instance, schema, path, schema_path, resolver)
            return
        if resolver is None:
            resolver = validator._resolver
        key = (id(schema), id(resolver))
        found = evolved.get(key)
        if found is None:
            found = evolved[key] = (
                schema,
                resolver,
                validator.evolve(schema=schema, _resolver=resolver),
            )
        sub = found[2]
        keywords = sub.VALIDATORS
        for keyword, value in schema.items():
            check = keywords.get(keyword)
            if check is None:
                continue
            for error in check(sub, value, instance, schema) or ():
                error._set(
                    validator=keyword,
                    validator_value=value,
                    instance=instance,
                    schema=schema,
                    type_checker=sub.TYPE_CHECKER,
                )
                if keyword not in {"if", "$ref"}:
                    error.schema_path.appendleft(keyword)
                if path is not None:
                    error.path.appendleft(path)
                if schema_path is not None:
                    error.schema_path.appendleft(schema_path)
                yield error

    shortcut_keywords: dict[str, Any] = {"$ref": ref} if shortcuts else {}
    # types-jsonschema leaves extend() untyped.
    extended = validators.extend(  # type: ignore[no-untyped-call]
        Draft202012Validator,
        validators={
            **shortcut_keywords,
            "type": _type,
            "minimum": _as_integer("minimum"),
            "maximum": _as_integer("maximum"),
            "exclusiveMinimum": _as_integer("exclusiveMinimum"),
            "exclusiveMaximum": _as_integer("exclusiveMaximum"),
            "multipleOf": _as_integer("multipleOf"),
            "enum": _or_integer("enum"),
            "const": _or_integer("const"),
            "anyOf": any_of,
            "oneOf": one_of,
        },
        type_checker=Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_integer),
    )
    plain_descend = extended.descend
    if shortcuts:
        extended.descend = descend
    return cast("type[Validator]", extended)


# ---------------------------------------------------------------------- reporting


def _order(value: object) -> tuple[str, str]:
    """Sorts numbers numerically and puts them before strings."""
    if isinstance(value, int):
        return ("0", f"{value:030d}")
    return ("1", str(value))


def _shorten(text: str) -> str:
    return text if len(text) <= _EXCERPT else text[: _EXCERPT - 1] + "…"


def _excerpt(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    if len(text) <= _EXCERPT:
        return text
    if isinstance(value, str):
        return f"{_shorten(text)} ({len(value)} characters)"
    if isinstance(value, list):
        return f"{_shorten(text)} ({len(value)} items)"
    return _shorten(text)


def _rule(error: ValidationError) -> str:
    keyword = str(error.validator)
    value: Any = error.validator_value
    if keyword == "required" and isinstance(error.instance, dict):
        return f"required {[name for name in value if name not in error.instance]}"
    if keyword in ("oneOf", "anyOf"):
        return _shorten(f"{keyword}: {error.message}")
    if isinstance(value, dict) or (isinstance(value, list) and keyword not in ("enum", "type")):
        return keyword
    return f"{keyword} {_shorten(json.dumps(value, ensure_ascii=False))}"


def _branches(error: ValidationError) -> dict[int, list[ValidationError]]:
    out: dict[int, list[ValidationError]] = {}
    for sub in error.context or ():
        out.setdefault(int(sub.relative_schema_path[0]), []).append(sub)
    return out


def _misses_kind(errors: list[ValidationError]) -> bool:
    """Discord's unions tell their objects apart by the ``type`` field: a branch whose
    ``type`` does not fit (or that wants another JSON type) is not a near miss."""
    return any(
        list(e.relative_path) == ["type"]
        or (e.validator == "type" and not e.relative_path)
        or (e.validator == "required" and not e.relative_path and _lacks_type(e))
        for e in errors
    )


def _lacks_type(error: ValidationError) -> bool:
    required: Any = error.validator_value
    return isinstance(error.instance, dict) and "type" in required and "type" not in error.instance


def _explain(error: ValidationError) -> list[tuple[str, str, object]]:
    """The (JSON path, rule, offending value) behind ``error``. For a union: the problems of
    the one branch of the right kind; if no branch is, what kinds there are."""
    branches = _branches(error)
    if not branches:
        return [(error.json_path, _rule(error), error.instance)]
    right = [errs for errs in branches.values() if not _misses_kind(errs)]
    if len(right) == 1:
        return [leaf for sub in right[0] for leaf in _explain(sub)]
    if right:
        return _explain(min(error.context, key=relevance))
    instance = error.instance
    subs = [sub for errs in branches.values() for sub in errs]
    kinds = [s for s in subs if list(s.relative_path) == ["type"] and s.validator in _KIND_RULES]
    if isinstance(instance, dict) and "type" in instance and kinds:
        allowed: set[Any] = set()
        for sub in kinds:
            value: Any = sub.validator_value
            allowed.update(value if sub.validator == "enum" else [value])
        rule = f"enum {sorted(allowed, key=_order)}"
        return [(f"{error.json_path}.type", rule, instance["type"])]
    if isinstance(instance, dict) and any(
        s.validator == "required" and _lacks_type(s) for s in subs
    ):
        return [(error.json_path, "required ['type']", instance)]
    wanted: set[str] = set()
    for sub in subs:
        if sub.validator == "type" and not sub.relative_path:
            wanted_here: Any = sub.validator_value
            wanted.update([wanted_here] if isinstance(wanted_here, str) else wanted_here)
    return [(error.json_path, f"type {sorted(wanted)}", instance)]


# ---------------------------------------------------------------------- routes


def _escape(segment: str) -> str:
    return segment.replace("~", "~0").replace("/", "~1")


@dataclass(frozen=True)
class _Route:
    template: str
    segments: tuple[str | None, ...]  # None for a {templated} segment
    names: tuple[str, ...]  # the templated segments' parameter names, in order
    methods: frozenset[str]

    @property
    def rank(self) -> tuple[bool, ...]:
        # Literal segments (@original, @me, ...) win over templated ones, leftmost first.
        return tuple(s is None for s in self.segments)

    def match(self, parts: Sequence[str]) -> dict[str, str] | None:
        values: dict[str, str] = {}
        names = iter(self.names)
        for want, got in zip(self.segments, parts, strict=True):
            if want is None and got:
                values[next(names)] = got
            elif want != got:
                return None
        return values


def _parse_route(template: str, item: JSON) -> _Route:
    segments: list[str | None] = []
    names: list[str] = []
    for segment in template[1:].split("/"):
        if segment.startswith("{") and segment.endswith("}"):
            segments.append(None)
            names.append(segment[1:-1])
        else:
            segments.append(segment)
    methods = frozenset(m for m in _METHODS if m in item)
    return _Route(template, tuple(segments), tuple(names), methods)


# ---------------------------------------------------------------------- the document


class DiscordOpenAPI:
    """The spec with its ``referencing`` registry, its routes and compiled validators."""

    def __init__(self, document: JSON, *, shortcuts: bool = True) -> None:
        self.document = document
        self.registry: Registry[Any] = Registry().with_resource(
            _BASE_URI, DRAFT202012.create_resource(document)
        )
        self._routes: dict[int, list[_Route]] = {}
        for template, item in document["paths"].items():
            route = _parse_route(template, item)
            self._routes.setdefault(len(route.segments), []).append(route)
        for routes in self._routes.values():
            routes.sort(key=lambda r: r.rank)
        self._validator_class = _validator_class(self.resolve, shortcuts=shortcuts)
        self._validators: dict[str, Validator] = {}
        self._body_verdicts: OrderedDict[tuple[str, str], tuple[SpecProblem, ...]] = OrderedDict()

    def at(self, pointer: str) -> Any:
        """The part of the document at the JSON pointer ``pointer``."""
        node: Any = self.document
        for segment in pointer.split("/")[1:]:
            key = segment.replace("~1", "/").replace("~0", "~")
            node = node[int(key)] if isinstance(node, list) else node[key]
        return node

    def resolve(self, schema: Any) -> Any:
        """``schema``, with the document's ``$ref``s followed."""
        while isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
            schema = self.at(schema["$ref"].removeprefix("#"))
        return schema

    def validator(self, pointer: str) -> Validator:
        """The validator for the schema at ``pointer``, compiled once."""
        found = self._validators.get(pointer)
        if found is None:
            schema = {"$ref": f"{_BASE_URI}#{pointer}"}
            found = self._validator_class(schema, registry=self.registry)
            self._validators[pointer] = found
        return found

    def match(self, method: str, path: str) -> tuple[str, dict[str, str]] | None:
        """The path template of the operation ``method path`` (``path`` relative to
        ``/api/v10``) and its path parameters' values; None if the spec has no such
        operation."""
        parts = path.split("/")[1:] if path.startswith("/") else [""]
        for route in self._routes.get(len(parts), ()):
            if method.lower() in route.methods:
                values = route.match(parts)
                if values is not None:
                    return route.template, values
        return None

    def check(
        self,
        method: str,
        path: str,
        *,
        query: Iterable[tuple[str, str]] = (),
        body: Any = None,
        content_type: str = "application/json",
    ) -> list[SpecProblem]:
        """Every way the request breaks the spec (empty when it keeps to it).

        ``path`` is relative to ``/api/v10``; ``query`` holds the query string's (name,
        value) pairs; ``body`` is the decoded JSON body (``payload_json`` of a multipart
        one), None for none; ``content_type`` is the request's Content-Type.
        """
        method = method.upper()
        found = self.match(method, path)
        if found is None:
            return [SpecProblem(f"{method} {path}", "route", "", "no operation in the spec", "")]
        template, values = found
        route = f"{method} {template}"
        item_pointer = f"/paths/{_escape(template)}"
        op_pointer = f"{item_pointer}/{method.lower()}"
        item = self.document["paths"][template]
        operation = item[method.lower()]

        # Operation-level parameters override path-level ones of the same name and place.
        declared: dict[tuple[str, str], str] = {}
        for pointer, params in (
            (item_pointer, item.get("parameters") or []),
            (op_pointer, operation.get("parameters") or []),
        ):
            for index, param in enumerate(params):
                declared[(param["in"], param["name"])] = f"{pointer}/parameters/{index}"

        problems: list[SpecProblem] = []
        for name, value in values.items():
            problems += self._check_param(route, "path", name, declared[("path", name)], [value])
        given: dict[str, list[str]] = {}
        for name, value in query:
            given.setdefault(name, []).append(value)
        for (where, name), pointer in declared.items():
            if where != "query":
                continue
            if name in given:
                problems += self._check_param(route, "query", name, pointer, given.pop(name))
            elif self.at(pointer).get("required"):
                problems.append(SpecProblem(route, "query", name, "required", "missing"))
        for name, got in given.items():
            rule = "not a parameter of this operation"
            problems.append(SpecProblem(route, "query", name, rule, _excerpt(got)))
        problems += self._check_body(route, op_pointer, operation, body, content_type)
        return [p for p in problems if not any(a.covers(p) for a in ALLOWANCES)]

    def _param_value(self, schema: Any, raw: list[str]) -> Any:
        """A parameter's value as Discord reads it out of the URL's strings (an integer
        stays a string: the int-parseable caveat judges it)."""
        schema = self.resolve(schema)
        kinds = _types(schema)
        for key in ("oneOf", "anyOf", "allOf"):
            for branch in schema.get(key) or ():
                kinds |= _types(self.resolve(branch))
        if "array" in kinds or len(raw) != 1:
            return raw
        value = raw[0]
        if "boolean" in kinds and value in _QUERY_BOOLEANS:
            return _QUERY_BOOLEANS[value]
        if "number" in kinds:
            try:
                return float(value)
            except ValueError:
                return value
        return value

    def _check_param(
        self, route: str, part: str, name: str, pointer: str, raw: list[str]
    ) -> list[SpecProblem]:
        value = self._param_value(self.at(pointer)["schema"], raw)
        return [
            SpecProblem(route, part, name + json_path[1:], rule, _excerpt(instance))
            for error in self.validator(f"{pointer}/schema").iter_errors(value)
            for json_path, rule, instance in _explain(error)
        ]

    def _check_body(
        self, route: str, op_pointer: str, operation: JSON, body: Any, content_type: str
    ) -> list[SpecProblem]:
        request_body = operation.get("requestBody")
        if body is None:
            if request_body and request_body.get("required"):
                return [SpecProblem(route, "body", "$", "required", "no body")]
            return []
        if request_body is None:
            return [SpecProblem(route, "body", "$", "the operation takes no body", _excerpt(body))]
        media = content_type.split(";")[0].strip().lower()
        if media not in request_body["content"]:
            offered = sorted(request_body["content"])
            return [SpecProblem(route, "body", "$", f"content type {offered}", media)]
        pointer = f"{op_pointer}/requestBody/content/{_escape(media)}/schema"
        # A bot sends the same large bodies again and again (its commands at every start):
        # the verdict on one is a function of its text, kept for the most recent bodies.
        key = (pointer, json.dumps(body, sort_keys=True))
        verdict = self._body_verdicts.get(key)
        if verdict is None:
            verdict = tuple(
                SpecProblem(route, "body", json_path, rule, _excerpt(instance))
                for error in self.validator(pointer).iter_errors(body)
                for json_path, rule, instance in _explain(error)
            )
            self._body_verdicts[key] = verdict
            if len(self._body_verdicts) > BODY_VERDICTS_KEPT:
                self._body_verdicts.popitem(last=False)
        else:
            self._body_verdicts.move_to_end(key)
        return list(verdict)


@functools.cache
def load() -> DiscordOpenAPI:
    """The spec, read from disk once per process (it is about 1.2 MB)."""
    with SPEC_FILE.open(encoding="utf-8") as handle:
        return DiscordOpenAPI(json.load(handle))
