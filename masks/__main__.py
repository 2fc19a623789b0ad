"""Command line: ``python -m masks compare ...`` (also installed as the ``masks`` script)."""

from __future__ import annotations

import argparse
import shlex
import sys

from masks import compare


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog="masks", description="masks: sampling-mask compaction")
    commands = parser.add_subparsers(dest="command", required=True)
    compare.add_arguments(
        commands.add_parser(
            "compare",
            help="gate every backend bit for bit against the reference, then time it",
            description=compare.__doc__.splitlines()[0],
        )
    )
    args = parser.parse_args(argv)
    return compare.main(args, command=shlex.join(["masks", *argv]))


if __name__ == "__main__":
    sys.exit(main())
