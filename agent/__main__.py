from smartarray_agent.cli import main

main()
