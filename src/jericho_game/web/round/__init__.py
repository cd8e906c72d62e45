"""The game round: a game's life from creation to its end.

Rooms (the only place that decides: seats, moves, clocks, AI requests, rematch), their state as the
clients see it, the cache of replayed rooms (never trusted for a decision), the commit pipeline,
fair endings (draws, takebacks, claims), time controls and correspondence, game records and a
browser's games.  Like lichess's ``round`` module.

May import: the rules library, the AI interface (:mod:`jericho_game.ai.base`), storage, common, i18n.
"""
