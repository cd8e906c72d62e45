"""``python -m jericho_game`` runs the ``jericho`` command."""

import sys

from jericho_game.cli import main

sys.exit(main())
