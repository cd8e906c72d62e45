"""Social: chat in games, and notifications (in-page and e-mail).

May import: the rules library, storage, common, i18n, the game round and accounts.
"""
