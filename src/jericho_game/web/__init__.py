"""The web app: ``jericho serve`` (server), storage and the static board page."""
