"""``python -m smartarray_agent.collectors.simulator``: the ``smartarray-sim`` command."""

import sys

from .cli import main

sys.exit(main())
