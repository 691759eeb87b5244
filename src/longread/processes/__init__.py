"""Child processes that end with their parent, however the parent ends.

:mod:`~longread.processes.lifetime` gives a ``Popen`` the kernel's parent-death signal
(``PR_SET_PDEATHSIG``) and walks a process tree; :mod:`~longread.processes.guard` is a small
stdlib-only program that runs a server (vLLM) in a process group of its own, adopts whatever the
server leaves behind, and ends the whole tree when its parent ends — by exit, signal or SIGKILL;
:mod:`~longread.processes.ordered_pool` maps a job over a stream in worker processes, in input order,
and kills them however the stream is left.
Nothing here imports the rest of longread: the guard starts in a fraction of a second.
"""
