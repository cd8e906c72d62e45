"""Accounts and ratings: sign-up, log-in, sessions, the password policy and its hashing pool,
Glicko-2 ratings of rated games, the leaderboard and profiles.

May import: the rules library, storage, common, i18n and the game round.
"""
