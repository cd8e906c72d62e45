"""The lobby: open public seeks and the public games being played, live on every server process.

May import: the rules library, storage, common, i18n and the game round (a seek becomes a game).
"""
