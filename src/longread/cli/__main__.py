"""``python -m longread.cli``: the ``longread`` command."""

from longread.cli.app import main

main()
