"""``python -m longread.cli``: the ``longread`` command."""

from longread.cli.app import main

if __name__ == "__main__":
    main()
