"""``python -m valuecore``: the command line (see ``valuecore/_cli/`` and ``docs/cli.md``)."""

import sys

if __name__ == "__main__":
    from ._cli.toplevel import answer_alone

    # --help, --version and no command need only the top level: answered without importing the commands.
    code = answer_alone(sys.argv[1:])
    if code is None:
        from ._cli.parser import parse_command_line

        # A command's --help, and a usage error, need only the parser: the commands are imported to run one.
        args = parse_command_line(sys.argv[1:])
        if isinstance(args, int):
            code = args
        else:
            from ._cli.commands import run

            code = run(args)
    sys.exit(code)
