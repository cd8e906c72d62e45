"""How long the analysis board's engine takes to stop (docs/web.md, "The engine's stream").

``python tests/web/analysis_stop_latency.py [N]`` (with ``PYTHONPATH=src``): one server app with a
real AI process, one ``/ws/analysis`` socket, N positions sent one after the other, each once the
previous search has passed 2,000 simulations; prints the ``stopped_in`` of every replaced search
(from the new position to the end of the old search) and the load average.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import warnings

warnings.simplefilter("ignore")

from starlette.testclient import TestClient  # noqa: E402

from jericho_game.web.server import Limits, create_app  # noqa: E402


def main(n: int = 12) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        app = create_app(os.path.join(tmp, "g.sqlite3"), ai_processes=1, limits=Limits(rate=1000.0, burst=1000))
        out: list[float] = []
        with TestClient(app) as c, c.websocket_connect("/ws/analysis") as ws:
            moves = ["5R@d2", "1G@d3", "2Y@d3"]
            for i in range(1, n + 1):
                ws.send_json({"type": "analyse", "id": i, "moves": moves[: i % 4]})
                while True:
                    m = ws.receive_json()
                    if m["type"] == "done" and m["id"] == i - 1:
                        out.append(m["stopped_in"])
                    if m["type"] == "update" and m["id"] == i and m["sims"] > 2000:
                        break
        print(f"load average {os.getloadavg()[0]:.1f}; stopped_in (s): {sorted(out)}")
        print(f"median {statistics.median(out):.3f} s, max {max(out):.3f} s over {len(out)} stops")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 12)
