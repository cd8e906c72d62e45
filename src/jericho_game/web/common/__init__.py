"""What every feature of the web app shares: reading JSON from clients, the server's limits, one
WebSocket client (its seats, rate limit and send queue), display names, fair share between clients,
and the client errors every answer uses.

May import: the rules library and :mod:`jericho_game.web.storage`.  No feature, page or transport.
"""
