"""Persistence for games, challenges, stats and settings behind one small interface.

Importing this package loads no database driver: the records and the :class:`Storage` contract
live in :mod:`bot.storage.base`, and :func:`bot.storage.connect.open_storage` opens the engine
that ``DATABASE_URL`` names.
"""

from bot.storage.base import (
    EVERY_GUILD,
    FORGOTTEN_NAME,
    VS_MEMBER,
    AlreadyRematchedError,
    ChallengeRecord,
    ChallengeStatus,
    ChannelBusyError,
    EndReason,
    Forgotten,
    GameRecord,
    GameStatus,
    GuildErased,
    MemberData,
    NewChallenge,
    NewGame,
    PlayerStats,
    Rating,
    Record,
    ReplyRoute,
    SchemaTooNewError,
    ShardSlice,
    Storage,
    StorageError,
    StoredGames,
    StoredSetting,
    is_forgotten,
)

__all__ = [
    "EVERY_GUILD",
    "FORGOTTEN_NAME",
    "VS_MEMBER",
    "AlreadyRematchedError",
    "ChallengeRecord",
    "ChallengeStatus",
    "ChannelBusyError",
    "EndReason",
    "Forgotten",
    "GameRecord",
    "GameStatus",
    "GuildErased",
    "MemberData",
    "NewChallenge",
    "NewGame",
    "PlayerStats",
    "Rating",
    "Record",
    "ReplyRoute",
    "SchemaTooNewError",
    "ShardSlice",
    "Storage",
    "StorageError",
    "StoredGames",
    "StoredSetting",
    "is_forgotten",
]
