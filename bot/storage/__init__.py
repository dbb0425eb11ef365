"""Persistence for games, challenges, stats and settings behind one small interface.

Open one with ``await SqliteStorage.open(path)``; everything else sees only :class:`Storage`.
"""

from bot.storage.base import (
    VS_MEMBER,
    AlreadyRematchedError,
    ChallengeRecord,
    ChallengeStatus,
    ChannelBusyError,
    EndReason,
    GameRecord,
    GameStatus,
    NewChallenge,
    NewGame,
    PlayerStats,
    Rating,
    Record,
    Storage,
    StorageError,
)
from bot.storage.sqlite import SqliteStorage

__all__ = [
    "VS_MEMBER",
    "AlreadyRematchedError",
    "ChallengeRecord",
    "ChallengeStatus",
    "ChannelBusyError",
    "EndReason",
    "GameRecord",
    "GameStatus",
    "NewChallenge",
    "NewGame",
    "PlayerStats",
    "Rating",
    "Record",
    "SqliteStorage",
    "Storage",
    "StorageError",
]
