"""`python -m agentopt` runs the same CLI as the `agentopt` script."""

from agentopt.cli.app import main

if __name__ == "__main__":
    main()
