"""``python -m smartarray_agent.simulator``: the ``smartarray-sim`` command."""

import sys

from smartarray_agent.simulator.cli import main

sys.exit(main())
