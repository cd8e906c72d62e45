"""Tournaments: arenas and Swiss tournaments between accounts (docs/web.md, "Tournaments").

Owns the tables ``tournaments``, ``tournament_players``, ``tournament_pairings`` and
``tournament_slots``; its games are online games made by the game round's service, rated through
the accounts' ratings, and its results are written in the transaction that ends each game
(the round's ``on_finish`` hook).  ``arena`` and ``swiss`` are pure rules (scoring, pairing).

May import: the rules library, storage, common, i18n, the game round, accounts and social.
"""
