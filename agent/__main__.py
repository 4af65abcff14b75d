from smartarray_agent.cli.app import main

main()
