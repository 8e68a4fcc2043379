"""``python -m fabricplan`` runs the command-line interface."""

from fabricplan.cli.app import main

if __name__ == "__main__":
    main()
