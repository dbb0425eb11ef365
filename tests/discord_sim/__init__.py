"""A small Discord-compatible server for end-to-end tests of discord.py bots.

The real, unmodified discord.py client talks to it over real sockets on 127.0.0.1: REST
under ``/api/v10`` and the gateway websocket at ``/``. The sim keeps what the bot did as
state, offers verbs that play a user's part, and checks everything the bot sends against
Discord's rules. Wire details it follows are in ``shared/docs/discord-wire-facts.md``.

Quick start (pytest; the ``sim`` fixture comes from ``tests/conftest.py``)::

    async def test_move(sim: DiscordSim) -> None:
        s = sim.seed
        async with sim.running(make_bot()) as client:    # any discord.Client
            ix = await sim.slash(s.alice, s.channel, "ttt start", opponent=s.bob)
            assert ix.response_type == 4 and not ix.ephemeral
            ix = await sim.click(s.bob, ix.message, "ttt:cell:4")
            assert ix.message.edits and ix.message.buttons()[4]["disabled"]

Setup
    ``sim = DiscordSim(response_deadline=3.0, interaction_timeout=5.0, token=...,
    bot_name="tttbot", recommended_shards=1)``; ``await sim.start(host="127.0.0.1", port=0)``
    (0 picks a free port); ``await sim.stop()``. Also an async context manager. The four
    settings are plain attributes a test may change (``sim.response_deadline = 0.2``).
    ``sim.api_base_url`` ("http://127.0.0.1:PORT/api/v10"), ``sim.gateway_url``
    ("ws://127.0.0.1:PORT/"), ``sim.token`` (any other token gets 401 -> LoginFailure),
    ``sim.bot_user``, ``sim.application_id`` (== bot user id).

World
    ``add_guild(name, *, id=None, shard=None, owner=None, bot_permissions=...,
    with_bot=True, commands_scope=True) -> SimGuild`` (``shard=(shard_id, shard_count)`` picks
    an id routed to that shard; ``with_bot=False``: a guild the bot is not in;
    ``commands_scope=False``: one that added the bot without applications.commands, where
    the app's guild commands get 403 Missing Access and no command can be used through the
    guild's install), ``remove_member(guild, user)`` (the bot too: then it is in no guild,
    and the application's ``approximate_guild_count`` says so),
    ``add_channel(guild, name) -> SimChannel``, ``deny(channel, user, permissions)`` (a
    permission overwrite, the bot's too, from then on: a thread under ``channel`` denies them
    too, interactions carry what is left as ``app_permissions``; 0 takes it away; an owner or
    an administrator keeps everything), ``delete_channel(channel)`` (its threads with it: the
    bot's requests there get 404 Unknown Channel, and no interaction comes from it; the sim
    sends no CHANNEL_DELETE), ``add_thread(parent, name)`` (type 11; a
    server holds ``guild.max_active_threads`` active ones, Discord's 1,000, past which a new
    one gets 400 with code 160006; the bot lists them with ``GET
    /guilds/{id}/threads/active``, each with its ``message_count`` and ``last_message_id``,
    and deletes one with Manage Threads only, as Discord asks even of its creator),
    ``dm_channel(user)`` (the bot's DM with ``user``), ``group_dm(name, *users)`` and
    ``private_dm(a, b)`` (channels the bot is not in), ``install_for_user(user)`` (the user
    installs the app to their account: needed where the bot is not; each interaction carries
    ``context`` (0 guild, 1 bot DM, 2 group or user DM, ``sim.context_of(channel)``) and
    ``authorizing_integration_owners``; the bot's channel routes get 403 Missing Access where
    ``sim.bot_reaches(channel)`` is False, and no message events come from there),
    ``add_user(name, *, bot=False) -> SimUser`` (``user.locale``, ``guild.locale``: the
    languages interactions report, ``"en-US"`` unless a test sets them),
    ``add_role(guild, name, *, permissions=0) -> SimRole``,
    ``add_member(guild, user, *, permissions=None, roles=(), nick=None) -> SimMember``
    (``permissions``, an int or ``discord.Permissions``, is granted on top of @everyone's
    ordinary member permissions), ``advance_clock(seconds)`` (the sim's clock, for the 15
    minute token expiry), ``seed_default(sim) -> Seed`` / ``sim.seed`` (guild, channel,
    other_channel, thread, owner, alice, bob, carol, moderator, other_bot).

Running a client
    ``async with sim.running(client, timeout=10.0, ready_delay=0.05, token=None) as client:``
    points ``discord.http.Route.BASE`` and ``DiscordWebSocket.DEFAULT_GATEWAY`` at the sim
    (restored on exit), caps ``guild_ready_timeout`` at ``ready_delay``, logs in, runs
    ``connect()`` as a task and returns once the client is ready with its guilds cached.
    If that task dies (e.g. a KeyError while parsing a dispatch) the wait, every later sim
    wait and the exit raise ``SimClientDied``. On exit it closes the client. Running a
    second client later (a restart) works; ``sim.identifies`` counts IDENTIFYs and
    ``sim.live_sessions()`` lists gateway sessions (``shard``, ``resumes``, ``conn``).

Verbs (each returns once the bot sent the interaction's initial response, or raises
``SimTimeout`` after ``timeout`` s, default ``interaction_timeout``; asking for something a
user could not do raises ``SimUsageError``)
    ``await slash(user, channel, "group sub", *, options=None, timeout=None, **opts)
    -> InteractionRecord``: checked against the commands the bot registered (name,
    subcommand path, option names, types, choices, bounds, required,
    default_member_permissions, contexts). ``SimUser`` values fill user options (with
    ``data.resolved``), ``SimChannel`` channel options, ``SimRole`` role options.
    ``await autocomplete(user, channel, "ttt move", *, focused="cell", cell="b") ->
    list[dict]`` (the choices). ``await click(user, message, custom_id) -> InteractionRecord``
    (button; ``message`` is a SimMessage or id; the button must exist on the message's current
    version, be enabled and visible to the user). ``await select(user, message, custom_id,
    values)``. ``await submit_modal(user, shown_ix, {custom_id: text})``; ``await
    submit_unopened_modal(user, channel, custom_id, *, message=None)``, a form the bot never
    opened (a stale client's, a hand-made one).
    ``await send_message(user, channel, content) -> SimMessage``.
    ``await drop_connection(*, shard_id=None, wait=True)`` aborts the socket(s) and waits
    for RESUME; ``await request_reconnect(...)`` sends op 7 and waits likewise.
    ``await close_gateway(*, resumable=True, code=None, shard_id=None, wait=True,
    timeout=None)``: ``resumable=True`` closes with ``code`` (4000 by default) and waits for
    the RESUME; ``resumable=False`` invalidates the session, with op 9 INVALID_SESSION
    (``d=false``) on the open socket or, given a ``code`` (4009...), by closing with it and
    answering the client's RESUME with op 9; it waits for the fresh IDENTIFY's session.
    ``refuse_gateway(count, *, status=502)`` answers the next ``count`` gateway connections
    with that HTTP status instead of the websocket (with ``drop_connection(wait=False)``:
    the client's reconnections fail until they are used up).
    ``await dispatch_raw(event, data, guild=None)`` sends any gateway dispatch.

HTTP mode (an application with an Interactions Endpoint URL)
    ``sim.interactions_url = "http://127.0.0.1:PORT/interactions"`` makes every verb POST its
    interaction there instead of sending it over the gateway, signed as Discord signs it
    (``X-Signature-Ed25519``: Ed25519 over ``X-Signature-Timestamp`` + the raw body, with
    ``sim.signing_key``; ``sim.public_key`` is the hex public key the bot checks with; an
    ``https://`` URL's certificate is checked against ``sim.interactions_ssl``: the system's
    authorities, or a test's own CA as an ``ssl.SSLContext``). The
    response's JSON is read as the interaction's callback, with every check above (3 s counted
    to when the response was read, one answer, the callback types, no flag but EPHEMERAL on
    a deferral, components v2, limits) and recorded in ``sim.requests`` as the callback route
    with ``http_response=True``. A status other than 200 is no answer: the verb raises
    ``SimTimeout`` naming it; so is a response whose Content-Type is not ``application/json``
    (charset aside), and a rule broken. A connection the endpoint refuses or drops (a worker
    killed holding the request) raises aiohttp's error, named in the record's ``dropped``. ``await
    sim.post_signed(body, *, timestamp=None, signed_body=None, key=None, signature=None)
    -> HttpAnswer(status, body, content_type)`` sends any body (unsigned with
    ``signature=""``, signed over another body, with another key or timestamp) and records
    nothing; ``await sim.ping()`` sends a PING; ``await sim.verify_endpoint()`` checks what
    Discord checks when the URL is saved (a PING answered 200 with a PONG labelled JSON, a
    wrongly signed one 401), each failure a violation, and returns the failures;
    ``sim.command_interaction(user, channel, "group sub", **opts)`` builds the payload
    ``slash`` would send without sending it.
    ``sim.spread_over(urls, order="round robin" | "random", seed=0)`` spreads the
    interactions over several workers' endpoints, as a load balancer would: in turn, or at
    random from ``seed`` (reproducible); each record's ``endpoint`` says where it went, and
    ``interactions_url`` is then the first (setting it goes back to one endpoint).
    ``sim.lose_http_answers = True`` loses every response on its way back, as a broken
    connection between Discord and the bot would after the bot wrote it: the verb raises
    ``SimTimeout`` and the interaction stays unanswered (its token knows no first answer).
    ``sim.interactions_keep_alive = False`` (before the first interaction) sends each one on a
    connection of its own, so that workers sharing one port share them: a kept-alive
    connection stays with the worker that accepted it.

Delivery (what Discord does with events while the bot's socket is down)
    An interaction goes to the session covering its guild, a connected one first. If that
    session's socket is down it is queued there, as Discord does, and replayed after the
    RESUME, its 3 s running from the moment it was queued. If the session is invalidated
    instead (``close_gateway(resumable=False)``, a fresh IDENTIFY for the same shard) what
    the client had not received is lost: ``ix.lost`` is set and the verb raises
    ``SimInteractionLost`` (a ``SimTimeout``). With no live session at all (before the first
    IDENTIFY, after a deliberate close or INVALID_SESSION) a verb waits for one.

Records and state
    ``InteractionRecord``: ``id, token, type (2 command, 3 component, 4 autocomplete, 5 modal),
    user, channel, guild, name, custom_id, options, payload (as sent), response_type (4..9),
    response_data, rejected (None, "late" or "invalid"), ephemeral, content, embeds,
    components, message (the SimMessage the response created or updated), followups
    (list[SimMessage]; after a type 5 defer ``followups[0] is message``), choices, modal,
    original_edits, callbacks, shard_id, session_id, seq, lost, endpoint, dropped, latency,
    done``; ``latency`` runs from the dispatch to the callback's arrival; ``await
    ix.wait_done()`` (True at once for 4/7/8/9, when the thinking message is filled for 5,
    after an @original edit or a followup for 6), ``await ix.wait_followups(n)``.
    ``SimMessage``: ``id, channel, author, content, embeds, components (raw JSON), flags,
    ephemeral, loading, edits (list[MessageVersion] before each edit), edited_at, deleted,
    allowed_mentions (as last sent), pinged (user ids notified), interaction_user (whom an
    ephemeral message is for), interaction, buttons(), button(custom_id),
    iter_components()``; ``buttons()`` and ``iter_components()`` walk nested components
    too, so ``click`` finds a button in a container's row or a section's accessory.
    ``sim.messages(channel)`` (creation order, ephemeral and deleted included),
    ``sim.last_message(channel)``, ``sim.message(id)``, ``sim.interactions``,
    ``sim.commands(guild=None)``, ``sim.requests`` (every REST call: method, path, status,
    body, route as "METHOD /template", fault), ``sim.unknown_routes`` ([(method, path)]
    answered with Discord's 404 JSON; path relative to /api/v10), ``sim.violations``
    (list[str]), ``sim.take_violations()``, ``await sim.wait_for(predicate,
    timeout=None)`` (returns the predicate's value; woken by every state change, no polling).

Checks (each recorded in ``sim.violations``, answered with Discord's error, and failing the
test at teardown of the ``sim`` fixture): message content over 2000 characters, embed
limits (10 embeds, title 256, description 4096, 25 fields, 6000 total ...), more than 5
action rows or 5 buttons in a row, a select sharing a row, custom_id over 100 characters or
repeated within a message, empty messages, invalid buttons, an interaction answered twice,
an initial response later than ``response_deadline`` s, a callback type not valid for the
interaction, followups or @original edits on a token older than 15 minutes or before the
acknowledgement, editing another user's message, invalid command definitions on sync
(translations included; a slash command's names, descriptions and choices over 8,000
characters, each field counted by its longest translation, as Discord counts them), invalid
autocomplete choices or modals, more than 10 files on a message or one over the upload limit
(``limits.ATTACHMENT_SIZE_LIMIT``, the ``attachment_size_limit`` interactions announce:
413, code 40005).

Components v2 (the layout discord.py's ``LayoutView`` sends)
    A message whose ``flags`` include IS_COMPONENTS_V2 (``1 << 15``, ``FLAG_COMPONENTS_V2`` in
    ``models.py``), created by any route (channel POST, callback type 4, followup) or by
    an edit (PATCH, callback type 7, webhook edit; a deferred message filled by a followup),
    holds top-level layout components: action rows (1), sections (9) with an accessory,
    text displays (10), media galleries (12), files (13), separators (14), containers (17).
    They are stored and returned as sent, in the message JSON and in INTERACTION_CREATE's
    ``message``, and the flag stays. Checks (``limits.py``, sources in its comments): at
    most 40 components counting nested ones; no ``content`` or ``embeds`` beside the
    flag; an edit may set the flag but not clear it (sending ``flags`` without it is a
    violation; leaving ``flags`` out keeps it); 4000 characters of text display content
    in all; which component may stand where (top level, in a container, a section's 1 to
    3 text displays and button or thumbnail accessory); and the classic rules inside the
    layout (5 buttons a row, a select alone, custom_ids 1 to 100 characters and unique in
    the message, valid buttons). Without the flag only action rows are accepted, as before.
    Mentions in text displays notify as mentions in content do (through allowed_mentions);
    ``message.text`` is what a person reads: the content, then the text displays.
    ``demo_client.LayoutDemoClient`` (``/grid``) is a ``LayoutView`` example.

Spec checks (``openapi.py``): every REST request is also checked against Discord's
published OpenAPI document (vendored in ``openapi_spec/``), with Discord's caveats and
nothing looser. A route the spec lacks, or a path parameter, query parameter or body
(``payload_json`` of a multipart one) that the operation's schemas reject is a violation
too, one line each: ``OpenAPI: METHOD /path/{template}: body $.json.path: rule: excerpt``.
They only record; the reply is left to the checks above, which stay in charge where Discord
is stricter than its spec (5 action rows, 2000 characters of content). The document loads
once per process (about 10 ms); the checks cost about 2 ms of CPU a request, some 12 s over
the fast loop's 6,000 requests (``tests/README.md``). ``sim.spec_checks = False`` turns
them off, for load benchmarks only (``bench/bot_load.py``), where they would cost the sim more
than the bot spends.

Faults (``sim.faults``, a ``FaultPlan``; the reference is ``faults.py``)
    ``sim.faults.add(route="*", *, status=None, body=None, rate_limit=None, global_=False,
    reset=None, delay=0.0, reply_delay=0.0, count=1, skip=0) -> Fault`` makes the next
    ``count`` REST requests matching ``route`` (after letting ``skip`` through) fail::

        sim.faults.add("POST /interactions/{id}/{token}/callback", status=500, count=2)
        sim.faults.add("PATCH /channels/{id}/messages/{id}", rate_limit=4.0)  # 429 + headers
        sim.faults.add("*", rate_limit=2.0, global_=True)                      # global 429
        sim.faults.add("POST /interactions/{id}/{token}/callback", reset="after")
        sim.faults.add("POST /channels/{id}/messages", reset="before")
        sim.faults.add("POST /interactions/{id}/{token}/callback", delay=4.0)  # arrives late
        sim.faults.add("POST /channels/{id}/messages", reply_delay=2.0)        # answers late

    Routes are "METHOD /path" with ``{anything}`` or ``*`` for one segment, ``**`` for the
    rest, ``*`` alone for all; a pattern that names no route is a ``SimUsageError``.
    ``rate_limit`` answers 429 with ``retry_after`` and Discord's ``X-RateLimit-*`` headers,
    and refuses that path (every path but the interaction endpoints, if global) until it
    has passed. ``status`` answers a 4xx/5xx with Discord's error JSON or ``body``.
    ``reset="before"`` aborts the connection with nothing applied, ``"after"`` once the
    request was applied. A request counts as arriving when its ``delay`` ends: the 3 s
    deadline of a callback is checked then, so ``delay`` past it gets 10062 (and the "late"
    violation), while ``reply_delay`` applies at once and only holds the reply.
    ``sim.faults.injected`` lists what fired (``Injected``: fault, kind, method, path,
    route, status the client got, applied, at, window, detail; gateway closes and refusals
    too),
    ``sim.faults.fired(kind=None, route=None)`` filters it, ``sim.faults.pending``,
    ``remove(fault)``, ``clear()`` (pending faults and rate-limit windows).

Gotchas
    * Build the world (guilds, channels, members) before ``running()``: the client learns it
      from READY and GUILD_CREATE, which are sent once, at IDENTIFY.
    * Verbs validate against the message's *current* version: clicking a button the bot has
      since removed or disabled raises ``SimUsageError``, as Discord would not show it.
    * A click discord.py cannot route (no View or DynamicItem for that message id and
      custom_id) is dropped silently by the library: the verb then fails with ``SimTimeout``.
    * Without the GUILD_PRESENCES intent, GUILD_CREATE carries only the bot's member, as on
      Discord; with GUILD_MEMBERS the client's chunk request returns every member. Members
      are always in interaction payloads.
    * Bots' own messages arrive as MESSAGE_CREATE/UPDATE/DELETE when the client has the
      GUILD_MESSAGES intent; ephemeral ones never do, and the bot cannot GET them.
    * Interaction ids carry the real time; ``advance_clock`` moves only the sim's clock.
    * A test that provokes a violation on purpose must ``sim.take_violations()`` it, or the
      ``sim`` fixture fails the test at teardown.
    * A callback that a fault refused (status, 429, reset before) was not applied: the verb
      waits for the bot's retry, and raises ``SimTimeout`` if none comes.
    * discord.py sleeps 5 s before every IDENTIFY but the first (``before_identify_hook``):
      after ``close_gateway(resumable=False)`` a client that does not override it is gone
      that long. It retries 500/502/504 after 1 s, 3 s...; aiohttp resends a GET, PUT or
      DELETE once when a reused connection drops (see ``faults.py``).

Where each part lives
    ``DiscordSim`` (``server.py``) is composed of one mixin a part, each building on
    ``SimCore`` or on the parts it calls, so that mypy checks what one part uses of another:

    * ``server.py``: ``DiscordSim``, its lifecycle (``start``, ``stop``, ``running``) and the
      HTTP plumbing: the REST route table, faults and spec checks around the handlers, and
      the order of replies and wake-ups.
    * ``core.py``: ``SimCore``, the settings and state every part shares, the addresses and
      clock, what tests read (``messages``, ``commands``, ``take_violations``...),
      ``wait_for`` and lookups.
    * ``world.py``: world building (``add_guild``, ``add_member``, ``dm_channel``...).
    * ``messages.py``: creating, editing and deleting messages, and their MESSAGE_* events.
    * ``rest.py``: the REST handlers of identity, commands, channels, users and guilds;
      ``rest_interactions.py``: the interaction callback and the interaction webhooks.
    * ``gateway.py``: the websocket, sessions, IDENTIFY and RESUME, the ordering ping, and
      ``drop_connection``, ``request_reconnect``, ``close_gateway``, ``refuse_gateway``,
      ``dispatch_raw``.
    * ``verbs.py``: ``slash``, ``autocomplete``, ``click``, ``select``, ``submit_modal``,
      ``submit_unopened_modal``, ``send_message``, and delivering an interaction to its session.
    * ``control.py``: the ``/_sim`` JSON API of the standalone server.
    * ``client_run.py``: what ``sim.running(client)`` returns.
    * ``wire.py``: what the parts share of the wire (error codes, intents, ``Call``,
      ``Connection``, ``Session``, ``write_reply``).

    Beside them: ``models.py`` (users, guilds, channels, messages, records), ``commands.py``
    (a slash command's data checked against the registered commands), ``limits.py``
    (Discord's rules), ``openapi.py`` (the spec checks), ``faults.py``, ``seed.py``,
    ``fixtures.py`` (``sim``, ``seed``), ``demo_client.py`` and ``__main__.py``.

Standalone: ``python -m tests.discord_sim --port 8765`` from the repository root (see
``__main__``).
"""

from .models import (
    InteractionRecord,
    MessageVersion,
    RequestRecord,
    SimChannel,
    SimClientDied,
    SimError,
    SimGuild,
    SimInteractionLost,
    SimMember,
    SimMessage,
    SimRole,
    SimTimeout,
    SimUsageError,
    SimUser,
)
from .seed import Seed, seed_default
from .server import DiscordSim

__all__ = [
    "DiscordSim",
    "InteractionRecord",
    "MessageVersion",
    "RequestRecord",
    "Seed",
    "SimChannel",
    "SimClientDied",
    "SimError",
    "SimGuild",
    "SimInteractionLost",
    "SimMember",
    "SimMessage",
    "SimRole",
    "SimTimeout",
    "SimUsageError",
    "SimUser",
    "seed_default",
]
