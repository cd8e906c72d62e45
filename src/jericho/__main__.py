"""``python -m jericho`` runs the ``jericho`` command."""

import sys

from jericho.cli import main

sys.exit(main())
