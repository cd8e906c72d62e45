"""Learning: game review, the analysis board and its live engine, puzzles and the tutorial.

May import: the rules library, the AI (:mod:`jericho_game.ai`: the analysis and the puzzles' search),
storage, common, i18n, the game round and accounts (puzzle ratings).
"""
