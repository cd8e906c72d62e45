"""The web app (``jericho serve``): :mod:`jericho_game.web.server` is the app factory and the
transport (HTTP and WebSocket, thin); everything else is in a package by feature, lowest first:

- :mod:`.storage`: the database (the truth), the broker between processes, the blocking-call threads;
- :mod:`.common` and :mod:`.i18n`: what every feature shares (JSON input, limits, a client's
  connection, names, fair share, worker processes) and the languages;
- the features: :mod:`.round` (a game's life), :mod:`.lobby`, :mod:`.accounts` (and ratings),
  :mod:`.learn` (review, analysis board, puzzles, tutorial), :mod:`.social` (chat, notifications);
- :mod:`.airunner`: the AI runner that thinks for the features;
- :mod:`.site`: pages, templates, static files, error pages, the HTTP guard;
- :mod:`.tools`: the load test and the rendering benchmark.

A module imports only its own layer or lower ones (tests/test_layering.py); docs/architecture.md
explains why each boundary is where it is.
"""
