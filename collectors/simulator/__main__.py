"""``python -m smartarray_agent.collectors.simulator``: the ``smartarray-sim`` command."""

import sys

from smartarray_agent.collectors.simulator.cli import main

sys.exit(main())
