"""``python -m valuecore``: the command line (see ``valuecore/_cli/`` and ``docs/cli.md``)."""

import sys

if __name__ == "__main__":
    from ._cli.commands import main

    sys.exit(main())
