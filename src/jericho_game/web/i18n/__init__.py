"""Languages of the web app: English and French, from gettext catalogs (docs/web.md, "Translations").

The catalogs (:mod:`jericho_game.web.i18n.catalog`: ``locale/{en,fr}/LC_MESSAGES/messages.po``
beside this package, read with Babel, compiled in memory) serve the templates
(:mod:`jericho_game.web.site.pages`), the page scripts (the messages whose source is a ``.js``
file go into each page as a JSON blob, read by ``static/i18n.js``'s ``t()``), the server's error
messages (:func:`error_text`) and the rules engine's own sentences (:mod:`.reasons`).

The language of a request: the ``lang`` query parameter (a link can force it), then the
``jericho_lang`` cookie (the header's switch sets it), then ``Accept-Language``, then English.
"""

from __future__ import annotations

from jericho_game.web.i18n import positions, reasons
from jericho_game.web.i18n.catalog import (
    COOKIE,
    DEFAULT,
    LANGUAGES,
    LOCALE_DIR,
    N_,
    NATIVE,
    choose,
    connection_language,
    format_date,
    format_number,
    from_accept_language,
    js_catalog,
    request_language,
    translations,
)

__all__ = [
    "COOKIE",
    "DEFAULT",
    "LANGUAGES",
    "LOCALE_DIR",
    "NATIVE",
    "N_",
    "choose",
    "connection_language",
    "format_date",
    "format_number",
    "from_accept_language",
    "js_catalog",
    "request_language",
    "translations",
    "ERRORS",
    "error_text",
]


# The human text of each error code, for the languages other than English.  English keeps the
# server's own message (more precise: it names the value that was wrong); these say the same in
# general words, and the code stays the same in every language.
ERRORS = {
    "bad_request": N_("This request is not valid."),
    "bad_filter": N_("A search filter is not valid: check the form's fields."),
    "bad_json": N_("The request is not valid JSON."),
    "bad_message": N_("This message is not understood."),
    "too_large": N_("The request is too large."),
    "too_many": N_("Too many requests: wait a moment and try again."),
    "rate_limited": N_("Too many requests: wait a moment and try again."),
    "busy": N_("The server is busy: try again in a moment."),
    "game_over": N_("The game is over."),
    "not_over": N_("The game is not over yet."),
    "not_a_player": N_("You are not playing in this game."),
    "not_your_turn": N_("It is not your turn."),
    "illegal": N_("This move is not allowed."),
    "waiting": N_("The game is waiting for an opponent."),
    "nothing_to_undo": N_("There is no move to take back."),
    "no_undo": N_("Taking back moves is not allowed in this game."),
    "unknown_game": N_("There is no game at this address."),
    "corrupt_game": N_("This game's record cannot be read."),
    "seat_taken": N_("This seat is already taken."),
    "bad_level": N_("This computer level is not available."),
    "moved_on": N_("The game moved on meanwhile: nothing was played."),
    "not_your_seat": N_("This seat belongs to another account: log in as its player to play it."),
    "no_offer": N_("There is no offer to answer."),
    "too_early": N_("Too early: wait a little longer."),
    "bad_username": N_("A username is 3 to 24 letters, digits, '_' or '-', starting with a letter or a digit."),
    "bad_invite": N_("This invitation is not valid, or it has already been used."),
    "bad_token": N_("This seat's key is not valid."),
    "name_required": N_("Choose a name first."),
    "timed_game": N_("Not possible in a game with a clock."),
    "not_online": N_("Only in an online game."),
    "opponent_here": N_("Your opponent is still here."),
    "own_offer": N_("You cannot answer your own offer."),
    "offer_pending": N_("An offer is already waiting for an answer."),
    "offer_again": N_("You made this offer a moment ago: wait before making it again."),
    "cannot_abort": N_("This game can no longer be cancelled."),
    "review_not_done": N_("The review is not finished yet."),
    "review_exists": N_("This game's review was already asked for: it is on its way."),
    "no_line": N_("The review has no line of the AI for this position."),
    "ai_quota": N_("You already have the most games waiting for the AI: wait for a reply; nothing was changed."),
    "seek_quota": N_("You already have the most open seeks in the lobby: wait for an opponent or cancel one."),
    "review_quota": N_("You already have the most reviews waiting: wait for one to finish; nothing was queued."),
    # issue 33: the AI's admission control and the mail quotas
    "ai_full": N_("The AI is fully booked at this level: choose an easier level or try again in a few minutes."),
    # issue 51: the one budget policy (web/common/budget.py)
    "ai_games": N_("You already play the most games against the AI at once: finish, resign or abort one first."),
    "search_busy": N_("Your previous search or download is still running: wait for it to finish."),
    "tournament_join_quota": N_("Too many players from your address joined this tournament."),
    "over_budget": N_("You have done this too often for now: wait a while; nothing was changed."),
    "mail_recipient_quota": N_(
        "This address or player has been sent the most mails of this kind for now: nothing was sent."
    ),
    "mail_account_quota": N_("Your account has asked for the most confirmation mails for today: nothing was sent."),
    "mail_sender_quota": N_("The most mails were asked for from your address for this hour: nothing was sent."),
    "puzzle_rate": N_("You have played the most rated puzzles for a few minutes: wait a little; nothing was rated."),
    "mail_budget": N_("This server has sent all the mails it may send this hour: try again later; nothing was sent."),
    "unknown_puzzle": N_("There is no such puzzle."),
    "bad_streak": N_("This streak does not match your solved puzzles: your best streak was not changed."),
    "illegal_move": N_("This move is not allowed in this position."),
    "bad_position": N_("This position text cannot be read."),
    "bad_record": N_("This game record cannot be read."),
    "login_required": N_("Log in first."),
    "not_logged_in": N_("You are not logged in."),
    "bad_login": N_("Wrong username or password."),
    "wrong_password": N_("This is not your account's password: nothing was changed."),
    "bad_password": N_(
        "This password is not accepted: at least 10 characters, not a common password, and hard to guess."
    ),
    "username_taken": N_("This username is already taken."),
    "unknown_account": N_("There is no such player."),
    "signup_closed": N_("Sign-up is closed on this server."),
    "same_account": N_("You cannot play against yourself in a rated game."),
    "not_admin": N_("Only an administrator can do this."),
    "not_found": N_("There is no page at this address."),
    "bad_method": N_("This method is not allowed here."),
    "internal": N_("Server error: the game is safe, try again."),
    "full": N_("Too many connections: try again later."),
    "csrf": N_("The page is out of date: reload it and try again."),
    # the games' chat (web/social/chat.py)
    "chat_too_long": N_("This chat message is too long."),
    "chat_muted": N_("An administrator has muted your chat on this site."),
    "spectator_chat": N_("The spectators' chat opens to the players once the game is over."),
    "unknown_message": N_("There is no such chat message."),
    "chat_text": N_("A chat message is plain text on one line: this one has characters that are not allowed."),
    # e-mail notifications (web/social/notify.py)
    "bad_email": N_("This e-mail address is not valid."),
    "email_off": N_("This server sends no e-mail."),
    "too_soon": N_("A confirmation mail was sent a moment ago: wait a minute."),
    "not_your_game": N_("Only a player of this game can do this."),
    "not_invitable": N_("Only an online game waiting for its invited opponent can be sent by mail."),
    "bad_link": N_("This link is not valid."),
    "lobby_full": N_(
        "The lobby's list of correspondence seeks is full: invite a player with the game's link, or try again later."
    ),
    "correspondence_quota": N_("You already have the most correspondence games going: finish one first."),
    "unavailable": N_("The engine is not available on this server."),
    # people (web/people/people.py)
    "not_yourself": N_("That is you: choose another player."),
    "blocked": N_("This player does not take this from you."),
    "blocking": N_("You blocked this player: unblock them first."),
    "too_many_follows": N_("You follow the most players there can be: unfollow one first."),
    "too_many_challenges": N_("Too many challenges wait for an answer, yours or this player's: cancel one or wait."),
    "challenges_closed": N_("This player's settings do not take your challenge: nothing was sent."),
    "already_challenged": N_("You already challenged this player: wait for the answer."),
    "unknown_challenge": N_("There is no such challenge."),
    "not_yours": N_("Only the other player can do this."),
    "not_pending": N_("This challenge was already answered."),
    # tournaments (web/tournaments/tournaments.py)
    "challenge_expired": N_("This challenge expired: its challenger left, or nobody answered it in time."),
    "unknown_tournament": N_("There is no such tournament."),
    "tournament_over": N_("This tournament is over."),
    "tournament_full": N_("This tournament is full."),
    "not_joined": N_("You have not joined this tournament."),
    "too_many_tournaments": N_("You already run the most tournaments: wait until one ends."),
    "no_berserk": N_("This tournament has no berserk."),
    "too_late": N_("Berserk is only before your first move."),
}


def error_text(code: str, message: str, lang: str) -> str:
    """The human text of an error for ``lang``: English keeps ``message``; another language gets
    ``message`` translated when the catalog has it word for word or it is one of the rules
    engine's sentences (:mod:`jericho_game.web.i18n.reasons`), else the code's general text."""
    if lang == DEFAULT or lang not in LANGUAGES:
        return message
    tr = translations(lang)
    translated = tr.gettext(message)
    if translated != message:
        return translated
    engine = reasons.translate(message, lang)  # the rules engine's own sentence (why a move is refused)
    if engine is not None:
        return engine
    position = positions.translate(message, lang)  # a bad position text, said to a player (issue 52)
    if position is not None:
        return position
    general = ERRORS.get(code)
    return tr.gettext(general) if general else message
