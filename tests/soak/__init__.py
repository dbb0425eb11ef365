"""The soak's parts; ``tests/test_bot_soak.py`` holds its tests.

* ``driver.py``: ``python -m bot`` as a process on one database, SIGKILLed and started again
  (``BotRunner``), and the players and the chaos that drive it (``Soak``).
* ``oracle.py``: the checks on the bot's database (SQLite or PostgreSQL), read directly
  (every game valid, no channel blocked, every finished game counted exactly once) and on the
  messages the sim holds for the live games and challenges.
* ``accounting.py``: every interaction answered, or accounted for by a kill, a fault or a
  lost session; which Discord rules broken a fault excuses.
"""
