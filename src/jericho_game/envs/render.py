"""A plain-text drawing of a position (pure Python: used by the envs and ``jericho engine``)."""

from __future__ import annotations

from typing import Any

from jericho_game.game import Game

__all__ = ["render_text", "render_in_mode"]


def _reserve_text(game: Game, side: str) -> str:
    groups: dict[int, str] = {}
    for p in game.reserve(side):
        groups[p.size] = groups.get(p.size, "") + p.colour.value
    return " ".join(f"{size}{colours}" for size, colours in sorted(groups.items())) or "-"


def render_text(game: Game) -> str:
    """The board as text: rows 4 to 1 (North at the top), towers written bottom to top.

    Below the board: who holds each monolith, the score, both reserves, the side to move,
    the last move and the result.
    """
    topo = game.topology
    by_row: dict[int, dict[str, str]] = {}
    columns: list[str] = sorted({c.name[0] for c in topo.cells})
    for cell in topo.cells:
        row = int(cell.name[1:])
        tower = "".join(str(p) for p in game.tower(cell.name))
        by_row.setdefault(row, {})[cell.name[0]] = tower or "."
    width = 9
    lines = [("     " + "".join(col.ljust(width) for col in columns)).rstrip()]
    rows = sorted(by_row, reverse=True)
    centre_after = None
    camps = {c.name: c.camp for c in topo.cells}
    for i, row in enumerate(rows):
        cells = by_row[row]
        lines.append(f"  {row}  " + "".join(cells.get(col, " ").ljust(width) for col in columns).rstrip())
        if i + 1 < len(rows) and centre_after is None:
            here = {camps[f"{col}{row}"] for col in cells}
            below = {camps[f"{col}{rows[i + 1]}"] for col in by_row[rows[i + 1]]}
            if here != below:
                centre_after = row
                lines.append("     " + "- " * (width * len(columns) // 2 - 8) + "centre")
    leaders = game.leaders()
    held = " ".join(f"{a}:{'S' if w == 'south' else 'N' if w == 'north' else '-'}" for a, w in leaders.items())
    s, n = game.score()
    lines.append(f"monoliths {held}")
    lines.append(f"score south {s} north {n}")
    lines.append(f"reserve south {_reserve_text(game, 'south')}")
    lines.append(f"reserve north {_reserve_text(game, 'north')}")
    last = game.state.last_cell
    last_text = "-"
    if last >= 0:
        t = game.tables
        last_text = str(t.move_objects[game.state.last_piece * t.n_cells + last])
    elif game.state.passes:
        last_text = "pass"
    outcome = game.outcome()
    status = f"result {outcome}" if outcome else f"to move {game.turn}"
    threat = game.seven_threat()
    if threat is not None and outcome is None:
        status += f" (seven-monolith threat: {threat} holds 7+)"
    lines.append(f"last {last_text}  {status}")
    return "\n".join(lines)


def render_in_mode(mode: str | None, game: Game) -> Any:
    """The envs' ``render()``: ``"ansi"`` returns the text, ``"human"`` prints it,
    ``"rgb_array"`` returns a picture (:func:`jericho_game.envs.picture.render_rgb`), no mode warns.
    """
    if mode is None:
        import gymnasium

        gymnasium.logger.warn("render() called without a render_mode (use 'ansi', 'human' or 'rgb_array')")
        return None
    if mode == "rgb_array":
        from jericho_game.envs.picture import render_rgb

        return render_rgb(game)
    text = render_text(game)
    if mode == "ansi":
        return text
    print(text)
    return None
