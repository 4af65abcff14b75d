import sys

from smartarray_agent.simulator.cli import main

sys.exit(main())
