"""Which message shows which game or challenge, and how the bot reaches it.

A game has one live board message and a challenge one message; a newer one retires the older
(its buttons go, a pointer to the newer takes their place). The bot edits its messages through
the channel where it is a member, and elsewhere (a group DM, a DM between members, a server
where only a member installed the app) only through the token of the latest interaction there,
valid 15 minutes: its *reply route*. A game settled when no token was valid is *unseen*, and the
next interaction there shows it. What was saved without its message (its answer failed, or the
bot was killed in between) is posted by the sweeper: :meth:`Boards.show_swept` is its display
half.

Nothing here decides a rule of the game (:mod:`bot.service` does); nothing here fails a
handler: a message that cannot be shown is logged, and shown another way later.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

import discord

from bot import render
from bot.answers import ANSWER_FAILURES, Answer, MarksRefused, sent_or_plain
from bot.clock import Clock
from bot.components import GAME_ACTION_ID, ID_FORMATS, walk
from bot.permissions import WRITE_IN_CHANNEL, WRITE_IN_THREAD
from bot.service import Swept
from bot.storage.base import (
    ChallengeRecord,
    DatabaseUnavailableError,
    GameRecord,
    GuildErased,
    ReplyRoute,
    ShardSlice,
    Storage,
    StorageError,
)

log = logging.getLogger(__name__)

T = TypeVar("T")

# Discord accepts an interaction's token for 15 minutes; it is stored as lasting a little less,
# so that an edit started just in time is not refused on the way.
TOKEN_LIFETIME = 15 * 60 - 30
# A newer interaction's token replaces the stored one for the same message once that is this
# old: one write per channel every few minutes of play, not one per click.
ROUTE_REFRESH_AFTER = 5 * 60
# A turn that runs out is swept this soon after its deadline (the sweeper runs every few seconds).
DEADLINE_SWEPT_WITHIN = 60.0
# How long a game or challenge may go without its message before the sweeper posts it: its
# handler, deferred if slow, has long finished by then.
UNSHOWN_GRACE = 30.0
# How long the sweeper leaves a channel that refused a post (403: a permission taken away, the
# bot removed from the server; 404: the channel deleted) before it posts there again: what was
# saved without its message is tried there once a minute, not at every sweep until its game
# times out (up to a week), since each refusal counts against the bot's invalid requests
# (10,000 in 10 minutes get it banned for a while).
REFUSED_CHANNEL_RETRY = 60.0
# How long after a game's change was saved an answer shows it without reading it again. Later,
# another worker may have saved a newer move meanwhile (the other player saw this change in a
# board another worker redrew, and answered it), and the older board would be put back over
# it, showing the wrong player to move: the game is read again and shown as stored. Sooner,
# nobody can have answered the change yet: a round trip through Discord and a click.
LATE_ANSWER = 0.25


def may_write(allowed: discord.Permissions, *, in_thread: bool) -> bool:
    """Whether the bot, ``allowed`` this in a channel (or a thread), may see and write in it."""
    return allowed >= (WRITE_IN_THREAD if in_thread else WRITE_IN_CHANNEL)


def reaches_channel(interaction: discord.Interaction[Any]) -> bool:
    """Whether the bot itself can post and edit in the interaction's channel, as the
    interaction tells: its own DM with the user, or a server channel of a server that added
    the bot, where the bot may see and write. Elsewhere only the interaction's token reaches
    the channel."""
    if interaction.context.dm_channel:
        return True
    if not interaction.is_guild_integration():
        return False
    in_thread = isinstance(interaction.channel, discord.Thread)
    return may_write(interaction.app_permissions, in_thread=in_thread)


# What to post before a game's board that is shown late (saved without its message): a
# tournament round's ping of its players, which was lost with the board, or None.
BeforeLateBoard = Callable[[GameRecord], Awaitable[render.Message | None]]


async def _nothing_before(game: GameRecord) -> render.Message | None:
    return None


class Boards:
    """The bot's messages about games and challenges, in this process's shards' guilds."""

    def __init__(
        self,
        storage: Storage,
        client: discord.Client,
        clock: Clock,
        shards: ShardSlice,
        marks_refused: MarksRefused,
        before_late_board: BeforeLateBoard = _nothing_before,
    ) -> None:
        self._storage = storage
        self._client = client
        self._clock = clock
        self._shards = shards
        self._marks_refused = marks_refused
        self._before_late_board = before_late_board
        # When Discord last refused a post in each channel (see REFUSED_CHANNEL_RETRY).
        self._refused_channels: dict[int, float] = {}
        # The games shown late whose ping (see BeforeLateBoard) was posted and board not yet:
        # a board Discord refuses again is tried at the next sweep without pinging again.
        self._pinged_late: set[int] = set()

    # -- answering an interaction ---------------------------------------------------------

    async def post_board(self, answer: Answer, game: GameRecord, note: str | None) -> None:
        """Reply with the board as a new message, which becomes the game's live board. If the
        reply fails, the saved state shows on the game's board message as it is (or, without
        one, the sweeper posts it; where the bot is not a member, the next interaction there
        shows it)."""
        game, note = await self.as_stored_if_late(game, note)
        message = render.board_message(game, note)
        answer.state.shown_games.add(game.id)
        if game.channel_id != answer.interaction.channel_id:  # a thread of its own
            await answer.post(render.thread_pointer_message(game, game.size))
            await self._post_in_thread(game, message)
            return
        message_id = await answer.post(message)
        if message_id is not None:
            await self._adopt_shown(answer, game, message_id, message_id)
        elif game.message_id is not None:
            await self._edit_beside(answer, game.channel_id, game.message_id, message)
        elif not reaches_channel(answer.interaction):
            await self._left_to_the_next_interaction(answer, game.channel_id, game.id)
        await self.close_thread(game)

    async def update_board(self, answer: Answer, game: GameRecord, note: str | None) -> None:
        """Edit the clicked board in place; it is (or becomes) the game's live board. If the
        answer fails, the board is edited through the channel, so it shows what was saved."""
        channel_id, message_id = _clicked(answer)
        game, note = await self.as_stored_if_late(game, note)
        message = render.board_message(game, note)
        answer.state.shown_games.add(game.id)
        if game.channel_id != channel_id:  # an accepted challenge, played in its own thread
            pointer = render.thread_pointer_message(game, game.size)
            if not await answer.update(pointer):
                await self._edit_beside(answer, channel_id, message_id, pointer)
            await self._post_in_thread(game, message)
            return
        if await answer.update(message) or await self._edit_beside(
            answer, channel_id, message_id, message
        ):
            await self._adopt_shown(answer, game, message_id, answer.interaction.id)
        await self.close_thread(game)

    async def as_stored_if_late(
        self, game: GameRecord, note: str | None
    ) -> tuple[GameRecord, str | None]:
        """``game`` and its ``note``, to show just after a change was saved; past
        :data:`LATE_ANSWER`, the game as stored if another worker moved it on meanwhile (with
        no note: it told of this change). A database failing here shows ``game``."""
        if self._clock.now() - game.updated_at < LATE_ANSWER:
            return game, note
        try:
            stored = await self._storage.get_game(game.id)
        except StorageError as error:
            log.info("could not read game %s again before showing it: %r", game.id, error)
            return game, note
        if stored is None or stored.version <= game.version:
            return game, note
        log.info("game %s moved on to version %s while answering", game.id, stored.version)
        return stored, None

    async def redraw_if_moved_on(self, answer: Answer, shown: GameRecord) -> None:
        """After ``answer`` drew ``shown`` on the clicked board with nothing saved (an
        ultimate pick, read as stored just before): a change saved between that read and
        the answer (a resignation, a turn run out, a board posted again) had its own edit
        land first and drawn over, leaving a live board with buttons on a game that had
        ended or moved to another message. The game is read again once the answer is shown,
        and the clicked board drawn as stored if it changed: whichever edit lands last has
        read the latest. A database failing here leaves the board to its next click."""
        try:
            stored = await self._storage.get_game(shown.id)
        except StorageError as error:
            log.info("could not read game %s again after showing it: %r", shown.id, error)
            return
        channel_id, message_id = _clicked(answer)
        # The clicked board recorded as the game's since the read (an accept's, whose id is
        # saved after its answer) is no change to show.
        if stored is None or (
            stored.version == shown.version and stored.message_id in (shown.message_id, message_id)
        ):
            return
        log.info("game %s changed while a pick was answered: drawn again", shown.id)
        if stored.message_id == message_id:
            message = render.board_message(stored)
        else:
            message = render.retired_board_message(stored)
        await self._edit_beside(answer, channel_id, message_id, message)

    async def _post_in_thread(self, game: GameRecord, message: render.Message) -> None:
        """Post a new game's board in the thread the bot opened for it (if that fails, the
        sweeper posts it later: the game has no board message yet). A post that came after
        the sweeper's (held past its grace) is taken back."""
        await self._post_first(game.channel_id, message, game.id, self._storage.first_game_message)

    async def post_in_own_thread(self, game: GameRecord) -> None:
        """Post the board of a game started outside an interaction (a tournament's round) in
        its own thread."""
        await self._post_in_thread(game, render.board_message(game))

    async def post(self, channel_id: int, message: render.Message) -> int | None:
        """Post a message outside an interaction; its id, or None (logged) if that failed."""
        return await self._post(channel_id, message)

    async def close_thread(self, game: GameRecord) -> None:
        """Archive the thread of its own a game was played in, once it is over. A thread the
        bot cannot archive stays open (logged): Discord archives it after a week unused."""
        if not game.own_thread or game.is_active:
            return
        try:
            await self._client.http.edit_channel(game.channel_id, archived=True)
        except ANSWER_FAILURES as error:
            log.info("could not archive thread %s of game %s: %s", game.channel_id, game.id, error)

    async def post_challenge(self, answer: Answer, challenge: ChallengeRecord) -> None:
        """Reply with the challenge as a new message, which becomes its message; an older one
        loses its buttons. Without a message (the reply failed), the sweeper posts it later
        where the bot is a member; elsewhere the challenger's ``/ttt start`` shows it."""
        message_id = await answer.post(render.challenge_message(challenge))
        if message_id is None and not reaches_channel(answer.interaction):
            await self._left_to_the_next_interaction(answer, challenge.channel_id, None)
        if message_id is None or message_id == challenge.message_id:
            return
        previous = await self._storage.set_challenge_message(challenge.id, message_id)
        if previous is not None and previous != message_id:
            # A newer message recorded before this one (a post held on its way) keeps the
            # challenge, and this one is retired.
            retired = render.retired_challenge_message(challenge)
            older = min(previous, message_id)
            await self._edit_beside(answer, challenge.channel_id, older, retired)
            if older == message_id:  # the newer one's token stays the route to it
                return
        await self._remember_route(answer, challenge.channel_id, message_id)

    async def update_challenge(self, answer: Answer, challenge: ChallengeRecord) -> None:
        """Edit the clicked challenge message in place (declined, withdrawn)."""
        message = render.challenge_message(challenge)
        if not await answer.update(message):
            channel_id, message_id = _clicked(answer)
            await self._edit_beside(answer, channel_id, message_id, message)

    async def show_changed(
        self, answer: Answer, changed: GameRecord | ChallengeRecord | None
    ) -> None:
        """A failed attempt that did settle something (a turn out of time, an expired
        challenge) shows the new state: in place on the clicked message, else by editing the
        stored one."""
        if changed is None:
            return
        if isinstance(changed, GameRecord):
            message = render.board_message(changed)
            answer.state.shown_games.add(changed.id)
        else:
            message = render.challenge_message(changed)
        clicked = answer.interaction.message
        # A message that already shows the end (nothing live left to press) stays as it is.
        if (
            clicked is not None
            and clicked.id == changed.message_id
            and (not _shows_live_state(clicked) or await answer.update(message))
        ):
            return
        if changed.message_id is not None:
            await self._edit_beside(answer, changed.channel_id, changed.message_id, message)

    async def show_unseen(self, answer: Answer) -> None:
        """A game in this channel (one the bot is not in) ran out of time when no
        interaction's token could edit its board: its result comes with this answer, as a
        follow-up."""
        channel_id = answer.interaction.channel_id
        if channel_id is None:
            return
        route = await self._storage.reply_route(channel_id)
        if route is None or route.unseen_game_id is None:
            return
        # Shown from now on, by this interaction alone: another there at once finds it taken.
        if not await self._storage.take_unseen_game(channel_id, route.unseen_game_id):
            return
        game = await self._storage.get_game(route.unseen_game_id)
        if game is None or game.id in answer.state.shown_games:
            return
        message_id = await answer.post(render.board_message(game))
        if message_id is None:  # not shown by this answer either: by the next one there
            await self._storage.set_unseen_game(channel_id, game.id)
            return
        if game.is_active:  # a game whose board never showed: played on from this one
            await self._adopt_shown(answer, game, message_id, message_id)
        else:
            await self._remember_route(answer, channel_id, message_id)

    async def reached_again(self, answer: Answer) -> None:
        """A command in a server channel the bot reaches (:func:`reaches_channel`): if the
        channel has a route all the same (kept while the bot could not post there, a
        permission since given back), the route goes, so that the bot edits and posts there
        itself again (a turn's timeout on its board, what was saved without its message)
        rather than through a token that dies within 15 minutes; a game that ended unseen
        meanwhile is shown on its board. A read a command, none on a click. The command is
        answered already: a database failing here leaves the route to the next command."""
        channel_id = answer.interaction.channel_id
        try:
            route = None if channel_id is None else await self._storage.reply_route(channel_id)
            if route is None:
                return
            await self._storage.forget_reply_route(route.channel_id)
            log.info("channel %s reaches the bot again: its reply route is dropped", channel_id)
            # A live game unseen (its board never arrived) is the sweeper's to post from now on.
            unseen = route.unseen_game_id
            game = None if unseen is None else await self._storage.get_game(unseen)
        except StorageError as error:
            log.info("could not look at channel %s's reply route: %r", channel_id, error)
            return
        if game is not None and not game.is_active and game.message_id is not None:
            message = render.board_message(game)
            await self._edit_in_channel(route.channel_id, game.message_id, message)

    async def _left_to_the_next_interaction(
        self, answer: Answer, channel_id: int, game_id: int | None
    ) -> None:
        """The answer that should have shown a new game (``game_id``) or challenge where the
        bot is not a member never arrived, and no request of the bot's own can post there: the
        next interaction there shows the game. The channel gets a route if it has none, so
        that the sweeper, which could only try the channel's routes, leaves it; that route
        edits nothing (it has expired, and Discord numbers no message 0)."""
        if await self._storage.reply_route(channel_id) is None:
            now = self._clock.now()
            await self._storage.save_reply_route(
                ReplyRoute(
                    channel_id=channel_id, token=answer.state.token, expires_at=now, message_id=0
                )
            )
        if game_id is not None:
            answer.state.shown_games.discard(game_id)
            await self._storage.set_unseen_game(channel_id, game_id)

    async def _adopt_shown(
        self, answer: Answer, game: GameRecord, message_id: int, as_of: int
    ) -> None:
        reaches = reaches_channel(answer.interaction)
        if await self.adopt_board(game, message_id, as_of, reaches=reaches):
            await self._remember_route(answer, game.channel_id, message_id, game.deadline)

    async def adopt_board(
        self, game: GameRecord, message_id: int, as_of: int, *, reaches: bool
    ) -> bool:
        """Make ``message_id`` the game's live board and take the buttons off the previous
        one, so that only one board of a game can be clicked. A click on an older board (a
        client that has not caught up) adopts that board in the same way. ``as_of``: the
        Discord id of the moment it became the board (a post's own id, a click's interaction
        id): a board posted after that and recorded first (this one was held on its way)
        stays, and this one is retired instead. ``reaches``: the bot can post and edit in the
        game's channel (:func:`reaches_channel`). Whether ``message_id`` is the live board."""
        if game.message_id == message_id:
            return True
        # The board recorded before this one, as stored: another post recorded at the same
        # time (two /ttt board at once) is retired by whichever of the two comes second.
        previous = await self._storage.set_game_message(game.id, message_id, as_of=as_of)
        if previous is None or previous == message_id:
            return True
        retired = message_id if previous > as_of else previous
        await self.edit(
            game.channel_id, retired, render.retired_board_message(game), reaches=reaches
        )
        # The live board, as stored now, is drawn again where it may not show the game: the
        # one a click meets (as_of is not its own id) may have been drawn before that click's
        # change was saved, or retired by the post it took over from, that edit still on its
        # way; the board just retired here may have been taken over again meanwhile by a
        # click on it, before this edit landed; and a post's was drawn from the game read
        # before it was posted, a move on the older board perhaps saved since.
        stored = await self._storage.get_game(game.id) or game
        live = stored.message_id
        if live is not None and (
            live == retired or as_of != message_id or stored.version != game.version
        ):
            await self.edit(game.channel_id, live, render.board_message(stored), reaches=reaches)
        return retired != message_id

    async def _edit_beside(
        self, answer: Answer, channel_id: int, message_id: int, message: render.Message
    ) -> bool:
        """Edit another message of the bot's than the one ``answer`` shows."""
        return await self.edit(
            channel_id, message_id, message, reaches=reaches_channel(answer.interaction)
        )

    async def _remember_route(
        self, answer: Answer, channel_id: int, message_id: int, deadline: float | None = None
    ) -> None:
        """In a channel the bot is not in, this interaction's token is how to edit the
        message it showed, for the next 15 minutes (a turn that times out), unless the stored
        one for that message is still fresh and outlives the turn's ``deadline``."""
        if reaches_channel(answer.interaction):
            return
        now = self._clock.now()
        kept = await self._storage.reply_route(channel_id)
        if (
            kept is not None
            and kept.message_id == message_id
            and kept.expires_at - now > TOKEN_LIFETIME - ROUTE_REFRESH_AFTER
            # A token that dies before the turn runs out cannot show the timeout (a turn of
            # over 9.5 minutes), where this interaction's may still be valid then.
            and (deadline is None or kept.expires_at > deadline + DEADLINE_SWEPT_WITHIN)
        ):
            return
        await self._storage.save_reply_route(
            ReplyRoute(
                channel_id=channel_id,
                token=answer.state.token,
                expires_at=now + TOKEN_LIFETIME,
                message_id=message_id,
            )
        )

    # -- outside an interaction -----------------------------------------------------------

    async def show_swept(self, settled: Swept) -> None:
        """The sweeper's display half: post what was saved without its message, once its
        handler has surely given up on it; show what ran out of time on its message (or,
        where no token reaches it, at the next interaction there)."""
        unshown = await self.unshown()
        self._pinged_late &= {game.id for game in unshown.games}
        # Another worker's sweep may post the same item meanwhile (this one held past its
        # lease's end): the first message recorded stays, and a later one is taken back.
        for game in unshown.games:
            if self._refused_lately(game.channel_id):
                continue
            if game.id not in self._pinged_late:
                before = await self._before_late_board(game)
                if before is not None:
                    if await self._post(game.channel_id, before) is None:
                        continue  # the board follows its ping, at a later sweep
                    self._pinged_late.add(game.id)
            message = render.board_message(game)
            await self._post_first(
                game.channel_id, message, game.id, self._storage.first_game_message
            )
        for challenge in unshown.challenges:
            if self._refused_lately(challenge.channel_id):
                continue
            message = render.challenge_message(challenge)
            record = self._storage.first_challenge_message
            await self._post_first(challenge.channel_id, message, challenge.id, record)
        await self.show_ended(settled.games, settled.challenges)

    async def _post_first(
        self,
        channel_id: int,
        message: render.Message,
        item_id: int,
        record: Callable[[int, int], Awaitable[bool]],
    ) -> None:
        """Post the first message of a game or challenge (``item_id``), and ``record`` it
        (``first_game_message`` or ``first_challenge_message``); if another process recorded
        one meanwhile, that one stays and this one is taken back."""
        message_id = await self._post(channel_id, message)
        if message_id is not None and not await record(item_id, message_id):
            await self._take_back(channel_id, message_id)

    async def _take_back(self, channel_id: int, message_id: int) -> None:
        """Delete a message the bot just posted for something another process showed first."""
        log.info("message %s in channel %s was posted twice: deleting it", message_id, channel_id)
        try:
            await self._client.http.delete_message(channel_id, message_id)
        except ANSWER_FAILURES as error:
            log.warning(
                "could not delete message %s in channel %s: %s", message_id, channel_id, error
            )

    async def show_ended(
        self,
        games: Iterable[GameRecord],
        challenges: Iterable[ChallengeRecord],
        note: Callable[[GameRecord], str | None] = lambda game: None,
    ) -> None:
        """Show games that ended and challenges that closed outside an interaction on their
        messages, each game with its ``note``; where no token reaches a game's board, at the
        next interaction there. The ends are saved already (and often answered: a forget-me,
        a leave): a database failing here leaves a board as it was, redrawn as stored at its
        next click, and is a WARNING, never an answer saying that nothing was done."""
        for game in games:
            try:
                route = await self._storage.reply_route(game.channel_id)
                message = render.board_message(game, note(game))
                shown = game.message_id is not None and await self._edit_by(
                    route, game.channel_id, game.message_id, message
                )
                if not shown and route is not None:  # the next interaction there shows it
                    await self._storage.set_unseen_game(game.channel_id, game.id)
            except DatabaseUnavailableError as error:
                log.warning("could not show the end of game %s on its board: %s", game.id, error)
            await self.close_thread(game)
        for challenge in challenges:
            if challenge.message_id is not None:
                message = render.challenge_message(challenge)
                await self.edit(challenge.channel_id, challenge.message_id, message)

    async def show_erased(self, erased: GuildErased) -> None:
        """Take the buttons off the messages of a server's live games and open challenges
        once its data was deleted. Its reply routes went with it: only messages in channels
        the bot is in can be edited."""
        shown_by: list[GameRecord | ChallengeRecord] = [
            *erased.live_games,
            *erased.pending_challenges,
        ]
        for shown in shown_by:
            if shown.message_id is not None:
                message = render.erased_message(shown)
                await self._edit_in_channel(shown.channel_id, shown.message_id, message)

    async def unshown(self) -> Swept:
        """Live games and pending challenges saved without their message (the answer that
        should have shown them failed, or the bot was killed in between), once their handler
        has surely given up on them."""
        before = self._clock.now() - UNSHOWN_GRACE
        return Swept(
            await self._storage.unshown_games(before, self._shards),
            await self._storage.unshown_challenges(before, self._shards),
        )

    async def edit(
        self,
        channel_id: int,
        message_id: int,
        message: render.Message,
        *,
        reaches: bool | None = None,
    ) -> bool:
        """Edit one of the bot's messages outside an interaction: through the channel where
        the bot is in it, else through the latest interaction token there while it is valid.
        ``reaches``: what an interaction at hand said about the channel (None: look it up).
        False if it could not (logged where it failed)."""
        if reaches:
            return await self._edit_in_channel(channel_id, message_id, message)
        route = await self._storage.reply_route(channel_id)
        if route is None and reaches is not None:
            log.info("no way to edit message %s in channel %s yet", message_id, channel_id)
            return False
        return await self._edit_by(route, channel_id, message_id, message)

    async def _edit_by(
        self, route: ReplyRoute | None, channel_id: int, message_id: int, message: render.Message
    ) -> bool:
        """Edit through the channel when it has no route (the bot is in it), else through the
        route's token."""
        if route is None:
            return await self._edit_in_channel(channel_id, message_id, message)
        return await self._edit_through(route, message_id, message)

    async def _edit_in_channel(
        self, channel_id: int, message_id: int, message: render.Message
    ) -> bool:
        partial = self._client.get_partial_messageable(channel_id).get_partial_message(message_id)
        try:
            await self._sent(message, lambda shown: partial.edit(**shown.edit_kwargs()))
        except ANSWER_FAILURES as error:
            log.warning(
                "could not edit message %s in channel %s: %s", message_id, channel_id, error
            )
            return False
        return True

    async def _edit_through(
        self, route: ReplyRoute, message_id: int, message: render.Message
    ) -> bool:
        """Edit ``message_id`` in a channel the bot is not in, through the route's token:
        only if the token can edit that message and is still valid."""
        if route.message_id != message_id or route.expires_at <= self._clock.now():
            return False
        client = self._client
        assert client.application_id is not None  # set at login
        webhook = discord.Webhook.partial(client.application_id, route.token, client=client)
        try:
            await self._sent(
                message, lambda shown: webhook.edit_message(message_id, **shown.edit_kwargs())
            )
        except ANSWER_FAILURES as error:
            log.warning(
                "could not edit message %s through an interaction token in channel %s: %s",
                message_id,
                route.channel_id,
                error,
            )
            return False
        return True

    async def _post(self, channel_id: int, message: render.Message) -> int | None:
        """Post a message outside an interaction; its id, or None (logged) if that failed."""
        channel = self._client.get_partial_messageable(channel_id)
        try:
            sent = await self._sent(message, lambda shown: channel.send(**shown.send_kwargs()))
        except (discord.Forbidden, discord.NotFound) as error:
            # What a server's admins did: one warning, then a line a minute at INFO.
            again = channel_id in self._refused_channels
            self._refused_channels[channel_id] = self._clock.now()
            log.log(
                logging.INFO if again else logging.WARNING,
                "could not post in channel %s (the sweeper tries again in %d s): %s",
                channel_id,
                REFUSED_CHANNEL_RETRY,
                error,
            )
            return None
        except ANSWER_FAILURES as error:
            log.warning("could not post in channel %s: %s", channel_id, error)
            return None
        self._refused_channels.pop(channel_id, None)
        log.info("posted message %s in channel %s", sent.id, channel_id)
        return sent.id

    def _refused_lately(self, channel_id: int) -> bool:
        """Whether Discord refused a post in the channel less than
        :data:`REFUSED_CHANNEL_RETRY` ago (a wall clock stepped back since counts as long
        ago, rather than holding the channel until it catches up)."""
        refused_at = self._refused_channels.get(channel_id)
        if refused_at is None:
            return False
        return 0 <= self._clock.now() - refused_at < REFUSED_CHANNEL_RETRY

    async def _sent(
        self, message: render.Message, send: Callable[[render.Message], Awaitable[T]]
    ) -> T:
        return await sent_or_plain(message, send, self._marks_refused)


def _clicked(answer: Answer) -> tuple[int, int]:
    """The channel and message of a click (the handler checked both are there)."""
    interaction = answer.interaction
    assert interaction.message is not None
    assert interaction.channel_id is not None
    return interaction.channel_id, interaction.message.id


def _shows_live_state(message: discord.Message) -> bool:
    """Whether the message offers a move, Resign, or an answer to a challenge: it shows a
    game or challenge as still going."""
    return any(
        isinstance(component, discord.Button)
        and not component.disabled
        and component.custom_id is not None
        and _acts_on_live_state(component.custom_id)
        for component in walk(message.components)
    )


def _acts_on_live_state(custom_id: str) -> bool:
    action = GAME_ACTION_ID.parse(custom_id)
    if action is not None:
        return action["action"] == "resign"  # Rematch and Review are on finished boards
    return any(form.parse(custom_id) for form in ID_FORMATS)
