"""Shared fixtures (the conformance vectors, tests/fixtures/conformance/) and the test tiers.

The slow tier (marker ``slow``): browser tests (Chromium through Playwright), tests that start
server processes, every test on PostgreSQL, builds of wheels and the JAX env's compiled tests, the
few exhaustive agreement runs (thousands of games) that have quicker siblings in the fast tier, and
the tests of more than a second or so (SLOW_TESTS_BY_FILE).
``python3 tasks.py test --fast`` leaves it out (``-m "not slow"``); ``python3 tasks.py test`` and CI
run everything.
"""

from __future__ import annotations

import gzip
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import Load

# A suite started in the background without job control (`nohup ... &`, some CI runners) has
# SIGINT ignored, and every engine it starts would inherit that and shrug off the Ctrl-C tests'
# interrupt.  A handled signal is reset to its default at exec, an ignored one is not: handle it.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

ROOT = Path(__file__).resolve().parent.parent
#: The conformance vectors kept with the tests (a copy of ../shared/conformance/random-games.jsonl,
#: gzipped; tests/fixtures/conformance/README.md): the suite needs nothing beside the checkout.
CONFORMANCE = ROOT / "tests" / "fixtures" / "conformance" / "random-games.jsonl.gz"


def conformance_path() -> Path:
    """The conformance vectors: ``JERICHO_CONFORMANCE`` (another file, plain or gzipped) when set,
    else the copy in tests/fixtures/conformance/."""
    chosen = os.environ.get("JERICHO_CONFORMANCE")
    path = Path(chosen) if chosen else CONFORMANCE
    if not path.exists():
        raise FileNotFoundError(f"conformance vectors not found: {path}")
    return path


def load_conformance() -> list[dict]:
    path = conformance_path()
    with gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


@pytest.fixture(scope="session")
def conformance_games() -> list[dict]:
    return load_conformance()


@pytest.fixture()
def load() -> Iterator[Load]:
    """The machine's load from the test's start (tests/helpers.Load): a wall-clock bound of an idle
    machine times ``load.measure()`` (which measures it once more) holds on a loaded one."""
    with Load() as measured:
        yield measured


#: Test files whose every test is in the slow tier (besides every ``*_ui.py``/``*_multiprocess.py``).
SLOW_FILES = {
    "test_browser.py",
    "test_ui.py",
    "test_shutdown_leaks.py",
    "test_examples.py",
    "test_packaging.py",  # builds an sdist and wheels, installs them in fresh venvs
    "test_jax_env.py",  # XLA compiles each batch size
    "test_jax_az.py",  # XLA compiles the AlphaZero baseline's search and training steps (seconds each)
    "test_ports.py",  # waits on ports a server has yet to listen on
}
#: Single tests in the slow tier, by file (under tests/): the exhaustive runs whose smaller siblings
#: stay in the fast tier (their comments say what they run), and every test that took over 2 s in
#: the fast tier of a full run on the 2-core machine with other work beside it (about 1 s on an idle
#: one; ``--durations=0``, 2026-12-07).  The fast tier is a quick answer while working (3 minutes);
#: these run in CI's full run.  tests/test_tiers.py checks that each name is a test of its file.
SLOW_TESTS_BY_FILE: dict[str, set[str]] = {
    "ai/test_analysis.py": {
        "test_random_moves_against_expert_review_far_below_expert_and_name_the_deciding_move",
    },
    "ai/test_arena.py": {
        "test_an_external_engine_plays_in_the_arena",
        "test_arena_time_gives_both_sides_the_same_time_per_move",
        "test_ctrl_c_on_a_parallel_run_keeps_the_finished_games",
        "test_kill_on_a_background_parallel_run_stops_it_as_ctrl_c_does",
    },
    "ai/test_evalnet.py": {
        "test_expert_iteration_resumes_from_its_files",
        "test_training_learns_the_search_s_visits",
    },
    "ai/test_ladder.py": {
        "test_the_ladder_elos_are_the_round_robins",
        "test_the_new_rungs_play_legal_moves_under_their_names",
    },
    "ai/test_players.py": {
        "test_a_seeded_alphabeta_search_does_not_depend_on_earlier_searches",
    },
    "ai/test_puzzles.py": {
        "test_make_finds_proves_and_resumes",
        "test_selfplay_puzzles_are_reproducible_with_any_number_of_jobs",
        "test_shipped_puzzles_are_proved_again",
        "test_shipped_puzzles_keep_their_promise_move_by_move",
    },
    "ai/test_siblings.py": {
        "test_playout_targets_are_the_mean_of_greedy_playouts_of_each_position_and_child",
        "test_training_teaches_the_order_of_siblings",
    },
    "ai/test_solver.py": {
        "test_bench_prints_the_solver_table",
        "test_python_and_c_agree_on_larger_positions",
        "test_python_search_matches_brute_force",
        "test_values_and_plies_match_brute_force",  # against brute force on 2,000 positions
    },
    "cli/test_protocol.py": {
        "test_client_stop_ends_an_external_engine_s_search",
        "test_end_of_input_lets_the_search_finish_and_the_engine_exits",
        "test_quit_and_ctrl_c_exit_even_when_the_player_cannot_be_stopped",
        "test_setoption_player_starts_an_external_program_at_once",
    },
    "cli/test_protocol_robust.py": {
        "test_the_engine_ends_with_status_0_with_stdin_kept_open",
        "test_the_start_up_limit_is_the_wait_for_the_handshake_and_startup_sets_it",
    },
    "envs/test_gym.py": {
        "test_a_level_s_clock_is_off_unless_asked_for",
        "test_check_env_for_every_opponent",  # Gymnasium's checker, every level
    },
    "envs/test_pettingzoo.py": {
        "test_performance_benchmark",
    },
    "envs/test_vector.py": {
        "test_bench_hook_prints_the_vector_env_figure",
        "test_the_c_batch_engine_equals_the_python_one",
    },
    "envs/test_vector_compact.py": {
        "test_compact_views_equal_the_float32_ones_on_many_positions",
    },
    "envs/test_vector_views.py": {
        "test_bench_vector_prints_flat_against_planar_canonical",
        "test_c_views_equal_the_numpy_ones_on_thousands_of_positions",
    },
    "rules/test_fuzz.py": {
        "test_from_position_raises_only_position_error",
        "test_parse_move_and_play_raise_only_illegal_move_error",
    },
    "rules/test_kernel.py": {
        "test_conformance_games_agree",
        "test_greedy_playouts_play_a_best_move_by_margin_and_break_sevens",
        "test_kernels_agree_on_a_board_with_three_cells_per_camp_and_alignment",
        "test_positions_loaded_from_text_agree",
        "test_transposition_statistics_change_the_search_only_where_a_position_repeats",
        "test_two_thousand_random_games_agree_ply_by_ply",  # C and Python kernels, 2,000 games x 8
    },
    "web/accounts/test_accounts.py": {
        "test_a_distributed_attack_locks_out_failed_addresses_for_one_window_only",
        "test_a_rated_game_updates_both_ratings_once_and_shows_on_the_leaderboard",
        "test_a_thousand_wrong_passwords_are_throttled_and_the_owner_still_logs_in",
        "test_no_signup_jericho_user_add_and_an_admin",
        "test_signups_ask_the_budget_per_address_group_and_in_total",
        "test_who_may_create_and_join_rated_games",
    },
    "web/accounts/test_ratings.py": {
        "test_an_established_account_counts_few_games_a_day_against_new_accounts",
    },
    "web/common/test_fairshare.py": {
        "test_a_burst_of_one_client_does_not_delay_another_clients_ai_reply",
        "test_the_audits_32_address_attack_leaves_a_victims_easy_replies_in_the_bound",
        "test_the_audits_63_watchers_no_longer_lock_the_joiner_out",
        "test_the_lobby_is_capped_per_address",
        "test_watchers_from_many_addresses_fill_the_game_and_its_players_still_get_in",
    },
    "web/learn/test_analysis_stream.py": {
        "test_a_burst_of_positions_ends_each_but_the_last",
        "test_a_new_position_from_the_page_ends_the_running_search",
        "test_a_stream_deepens_while_it_thinks_and_stops_on_request",
        "test_a_stream_started_by_the_same_client_elsewhere_replaces_this_one",
        "test_one_stream_per_client_a_second_replaces_the_first",
        "test_streams_beyond_the_pool_share_wait_their_turn",
    },
    "web/learn/test_puzzles.py": {
        "test_a_solution_seen_or_a_solve_too_fast_rates_nothing_and_a_days_gain_is_bounded",
        "test_anonymous_solving_moves_no_rating_whatever_token_it_sends",
        "test_make_reads_the_finished_games_of_a_server_database",
        "test_moves_are_checked_and_the_reply_is_played",
        "test_next_returns_a_proved_puzzle_without_its_solution",
        "test_puppets_cannot_move_a_puzzles_rating",
    },
    "web/learn/test_review.py": {
        "test_a_dead_workers_review_step_is_taken_over_and_its_late_result_is_refused",
        "test_a_review_is_queued_once_run_stored_and_delivered_to_players_and_spectators",
        "test_a_review_that_keeps_failing_is_marked_failed_and_can_be_asked_again",
        "test_a_slow_slide_is_explained_accuracy_turning_points_lines_and_one_numbering",
        "test_hostile_review_requests_get_clear_coded_errors_and_change_nothing",
    },
    "web/people/test_gamesearch.py": {
        "test_the_position_index_answers_as_the_replay_does",
    },
    "web/people/test_people.py": {
        "test_a_block_stops_challenges_follows_and_cancels_pending_ones",
        "test_challenge_limits_are_counted_in_the_database",
        "test_follow_and_see_followers_and_the_online_list",
    },
    "web/people/test_people_limits.py": {
        "test_a_hundred_challenge_cycles_mail_the_victim_at_most_its_hourly_cap",
        "test_forty_fresh_accounts_cannot_all_challenge_or_follow_one_victim",
    },
    "web/round/test_correspondence.py": {
        "test_a_correspondence_turn_is_mailed_to_an_absent_player_once",
        "test_a_full_correspondence_list_shared_fairly_refuses_a_logged_in_player_without_asking_to_log_in",
        "test_correspondence_seeks_from_many_addresses_cannot_fill_the_lobby_for_a_week",
        "test_your_turn_lists_the_games_waiting_for_the_player_most_urgent_first",
        "test_your_turn_of_an_account_needs_no_token",
    },
    "web/round/test_online.py": {
        "test_a_move_answers_the_opponents_draw_offer",
        "test_a_rematch_keeps_the_names_with_the_people_and_is_not_listed",
        "test_a_spectator_arriving_does_not_reset_how_long_a_seat_has_been_away",
        "test_abort_before_both_sides_moved_and_not_after",
        "test_draw_offer_decline_then_accept_is_recorded",
        "test_takeback_request_accepted_takes_the_move_back_and_is_recorded",
    },
    "web/site/test_hardening.py": {
        "test_a_burst_of_log_ins_never_holds_up_the_rest_of_the_server",
        "test_profiles_list_private_games_to_their_owner_only",
        "test_request_heads_are_limited_in_size_and_time",
        "test_sock_puppets_cannot_farm_a_rating",
        "test_successful_log_ins_are_limited_and_sessions_capped",
    },
    "web/site/test_openapi.py": {
        "test_fuzz_every_operation",
    },
    "web/social/test_chat.py": {
        "test_a_flood_of_reports_from_accounts_cannot_push_a_real_report_out",
        "test_a_players_message_reaches_the_opponent_with_the_authors_name",
        "test_anonymous_watchers_from_sixty_addresses_cannot_flood_the_reports",
        "test_chat_is_for_online_games_and_survives_a_restart",
        "test_one_address_has_a_budget_across_games_too",
    },
    "web/social/test_notify.py": {
        "test_a_refused_mail_is_retried_later_and_a_permanent_refusal_ends_it",
        "test_an_address_is_confirmed_by_the_link_of_a_mail_sent_by_the_background_job",
        "test_an_invitation_by_mail_and_its_one_click_unsubscribe",
        "test_bad_addresses_and_fields_are_refused_and_change_nothing",
        "test_mails_from_one_address_and_the_servers_budget_are_limited",
        "test_no_link_in_a_mail_comes_from_the_host_header",
        "test_one_victim_cannot_receive_45_invitations_from_6_senders",
        "test_smtp_without_a_public_url_is_refused_with_a_clear_message",
        "test_ten_accounts_from_one_address_cannot_mail_a_stranger_ten_confirmations",
        "test_the_request_never_waits_for_the_mail_server",
        "test_without_smtp_no_address_is_taken",
    },
    "web/test_ladder.py": {
        "test_a_player_that_needs_a_file_is_never_offered_nor_imported",
    },
    "web/test_server.py": {
        "test_a_database_written_before_versions_is_migrated_and_its_clock_still_runs",
        "test_a_stored_game_whose_ai_level_is_gone_still_gets_its_ai_moves",
        "test_an_ai_player_is_never_used_by_two_threads_at_once",
        "test_an_online_rematch_clock_waits_for_its_first_moves",
        "test_bad_clock_and_bad_fields_are_refused",
        "test_clock_flags_the_side_that_runs_out",
        "test_full_game_against_the_ai_then_record_and_replay",
        "test_jericho_serve_prints_its_url_and_survives_kill_9",
        "test_pages_static_files_topology_and_levels",
        "test_restart_resumes_every_game_from_its_last_acknowledged_move",
        "test_state_announces_who_holds_seven",
        "test_the_ai_queue_is_bounded_and_states_say_where_a_game_stands",
        "test_the_server_flags_a_silent_player_on_its_own",
        "test_the_start_up_heap_is_frozen_while_the_app_runs",
    },
    "web/tools/test_loadtest.py": {
        "test_the_command_plays_games_against_a_server_it_starts_and_prints_its_figures",
    },
    "web/tournaments/test_pairing.py": {
        "test_swiss_200_players_all_drawing_are_paired_every_one_of_15_rounds",
    },
    "web/tournaments/test_tournament_budgets.py": {
        "test_a_flood_hides_no_other_tournament_and_the_featured_one_shows",
        "test_a_flood_of_tournaments_is_refused_by_the_creation_budget",
        "test_a_swiss_round_is_computed_outside_the_tournaments_lock_and_checked_before_it_is_written",
        "test_a_swiss_round_pairs_a_blocked_pair_only_when_it_must",
        "test_an_arena_never_pairs_two_players_when_one_blocked_the_other",
        "test_one_address_group_cannot_fill_a_tournament_and_the_creator_keeps_a_seat",
        "test_with_its_budgets_at_zero_creation_and_joining_are_refused_and_change_nothing",
    },
    "web/tournaments/test_tournaments.py": {
        "test_a_pairing_left_without_its_game_by_a_killed_process_gets_it_from_the_next_look",
        "test_a_swiss_tournament_plays_its_rounds_without_repeats_and_ranks_by_tie_breaks",
        "test_an_admin_features_a_tournament_on_the_home_page",
        "test_arena_points_streak_and_fire_are_written_when_games_end",
        "test_berserk_halves_the_clock_before_the_first_move_only",
    },
}
SLOW_TESTS = set().union(*SLOW_TESTS_BY_FILE.values())


def is_slow(item: pytest.Item) -> bool:
    """Whether a test belongs to the slow tier: a browser, server processes or PostgreSQL."""
    name = item.path.name
    if name in SLOW_FILES or name.endswith(("_ui.py", "_multiprocess.py")):
        return True
    if getattr(item, "originalname", item.name) in SLOW_TESTS or item.get_closest_marker("slow") is not None:
        return True
    params = getattr(getattr(item, "callspec", None), "params", {})
    fixtures = set(getattr(item, "fixturenames", ()))
    if params.get("db") == "postgresql" or "postgres_socket" in fixtures:
        return True
    # a browser test in a file of fast tests: it asks for a browser or a page, and its module uses Playwright
    module = getattr(item, "module", None)
    names = vars(module).values() if module is not None else ()
    uses_playwright = any(str(getattr(v, "__module__", "")).startswith("playwright") for v in names)
    return uses_playwright and bool({"browser", "page"} & fixtures)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """In the fast tier, files wholly in the slow tier are not even imported (Playwright, JAX)."""
    if config.getoption("markexpr", "") == "not slow":
        name = collection_path.name
        if name in SLOW_FILES or name.endswith(("_ui.py", "_multiprocess.py")):
            return True
    return None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: browsers, server processes, PostgreSQL (tests/conftest.py)")
    config.addinivalue_line(
        "markers",
        "timing: a wall-clock bound, scaled by a same-run baseline of the machine's load (tests/helpers.Load); "
        "tasks.py's full run runs these twice more beside two CPU burners, so keep them quick (CONTRIBUTING.md)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if is_slow(item):
            item.add_marker(pytest.mark.slow)
