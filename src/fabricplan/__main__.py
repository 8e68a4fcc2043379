"""``python -m fabricplan`` runs the command-line interface."""

from fabricplan.cli.start import main

if __name__ == "__main__":
    main()
