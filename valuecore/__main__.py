"""``python -m valuecore``: the command line (see ``valuecore/_cli/`` and ``docs/cli.md``)."""

import sys

if __name__ == "__main__":
    from ._cli.toplevel import answer_alone

    # --help, --version and no command need only the top level: answered without importing the commands.
    code = answer_alone(sys.argv[1:])
    if code is None:
        from ._cli.commands import main

        code = main()
    sys.exit(code)
