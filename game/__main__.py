"""``python -m game``: play tic-tac-toe in the terminal."""

import sys

from game.cli import main

sys.exit(main())
