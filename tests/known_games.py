"""Known games and their reviews word for word, for the engine's tests of the review and the
bot's (which must show exactly these sentences). Moves are cells by name, X first."""

from __future__ import annotations

# O must block A3 (X holds A1 and A2); B1 lets X complete the column.
BLUNDER = ["A1", "B2", "A2", "B1", "A3"]
BLUNDER_REVIEW = [
    "1. X A1 — draw.",
    "2. O B2 — draw.",
    "3. X A2 — draw.",
    "4. O B1 — blunder: the game was a draw, now X wins. A3 kept the draw.",
    "5. X A3 — X wins the game.",
]
# After O's A3, X wins at C2 (row 2 with A2 and B2); C1 blocks O's diagonal instead.
MISSED_WIN = ["B2", "A1", "A2", "A3", "C1", "C2", "B3", "B1", "C3"]
MISSED_WIN_REVIEW = [
    "1. X B2 — draw.",
    "2. O A1 — draw.",
    "3. X A2 — draw.",
    "4. O A3 — blunder: the game was a draw, now X wins. C2 kept the draw.",
    "5. X C1 — missed win: the game was a win for X, now a draw. C2 won at once.",
    "6. O C2 — draw.",
    "7. X B3 — draw.",
    "8. O B1 — draw.",
    "9. X C3 — the game ends in a draw.",
]
# Every move keeps the draw.
PERFECT_DRAW = ["B2", "A1", "C3", "A3", "A2", "C2", "B3", "B1", "C1"]
PERFECT_DRAW_REVIEW = [
    "1. X B2 — draw.",
    "2. O A1 — draw.",
    "3. X C3 — draw.",
    "4. O A3 — draw.",
    "5. X A2 — draw.",
    "6. O C2 — draw.",
    "7. X B3 — draw.",
    "8. O B1 — draw.",
    "9. X C1 — the game ends in a draw.",
]
# A 5x5 game that fills the board with no 4 in a row (rows XXOOX / OOXXO, alternately): the
# longest review there is, 25 moves, judged exactly (O's D1 already loses: X wins from C3).
FULL_5X5 = [
    "A1", "C1", "B1", "D1", "E1", "A2", "C2", "B2", "D2", "E2", "A3", "C3", "B3",
    "D3", "E3", "A4", "C4", "B4", "D4", "E4", "A5", "C5", "B5", "D5", "E5",
]  # fmt: skip
FULL_5X5_REVIEW = [
    "1. X A1 — draw.",
    "2. O C1 — draw.",
    "3. X B1 — draw.",
    "4. O D1 — blunder: the game was a draw, now X wins. C3 kept the draw.",
    "5. X E1 — missed win: the game was a win for X, now a draw. C3 kept the win.",
    "6. O A2 — draw.",
    "7. X C2 — draw.",
    "8. O B2 — draw.",
    "9. X D2 — draw.",
    "10. O E2 — blunder: the game was a draw, now X wins. C3 kept the draw.",
    "11. X A3 — missed win: the game was a win for X, now a draw. C3 kept the win.",
    "12. O C3 — draw.",
    "13. X B3 — draw.",
    "14. O D3 — draw.",
    "15. X E3 — blunder: the game was a draw, now O wins. E5 kept the draw.",
    "16. O A4 — missed win: the game was a win for O, now a draw. D4 kept the win.",
    "17. X C4 — draw.",
    "18. O B4 — draw.",
    "19. X D4 — draw.",
    "20. O E4 — draw.",
    "21. X A5 — draw.",
    "22. O C5 — draw.",
    "23. X B5 — draw.",
    "24. O D5 — draw.",
    "25. X E5 — the game ends in a draw.",
]
