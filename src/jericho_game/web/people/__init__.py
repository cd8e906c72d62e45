"""People: follows, blocks and challenges between accounts (docs/web.md, "People").

Owns the tables ``follows``, ``blocks``, ``challenges`` and ``people_seen``; a challenge accepted
becomes a game through the game round's service (``GameService.create`` then ``join``).  A player's
games searched and exported (``gamesearch``) and their statistics (``playerstats``, which reads the
ratings and the reviews) live here too: they read every feature below.

May import: the rules library, storage, common, i18n, the game round, accounts, learning and social.
"""
