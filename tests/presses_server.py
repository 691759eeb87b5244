"""A fork server in the presses' environment: ``longread`` commands for the tests, each in a process of its
own, without each importing torch, transformers and kvpress again (~6 CPU-s a command here).

Run by the presses' Python (``python -m tests.presses_server``, from the checkout); it imports what the
commands import, then reads one JSON request a line on stdin — ``{"args": [...], "cwd": ..., "out": ...,
"err": ...}`` — forks, and the child runs ``longread ARGS`` in ``cwd`` with its stdout and stderr (file
descriptors 1 and 2) in the files ``out`` and ``err``, as ``python -m longread.cli ARGS`` would; the server
answers ``{"returncode": N}`` once the child has ended (−signal if a signal ended it, as ``subprocess``
says).
The server itself runs nothing in parallel before it forks (no torch op), so each child starts its own
thread pools. Only the standard library and longread are imported: pytest is not in this environment.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from typing import Any


def _preload() -> None:
    """What every command imports before its first line of work: the CLI, kvpress, the model classes."""
    import kvpress  # noqa: F401
    import matplotlib.pyplot  # noqa: F401  (the presses' plots)
    import transformers  # noqa: F401

    import longread.cli.app  # noqa: F401
    from longread.models.press_spec import available_presses

    available_presses()


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)  # what the interpreter prints for a message passed to sys.exit
    return 1


def _child(request: dict[str, Any]) -> None:
    """In the forked child: ``longread ARGS`` as its own process would run it; never returns."""
    code = 1
    try:
        os.chdir(request["cwd"])
        for fd, path in ((1, request["out"]), (2, request["err"])):
            target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(target, fd)
            os.close(target)
        nothing = os.open(os.devnull, os.O_RDONLY)
        os.dup2(nothing, 0)  # the server's requests are not the command's input
        os.close(nothing)
        import longread.cli.__main__ as entry
        from longread.cli.app import main

        # what `python -m longread.cli` has: its usage lines name it so
        sys.argv = [str(entry.__file__), *request["args"]]
        sys.modules["__main__"].__package__ = "longread.cli"

        try:
            main()
            code = 0
        except SystemExit as exc:
            code = _exit_code(exc)
    except BaseException:  # the child reports whatever ended it, as an interpreter would
        traceback.print_exc()
        code = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def serve() -> None:
    _preload()
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(request)
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}), flush=True)


if __name__ == "__main__":
    serve()
