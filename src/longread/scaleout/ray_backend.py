"""Data-parallel evaluation on Ray: one model replica per Ray actor, behind the ordinary backend interface.

:class:`RayBackend` looks to the runner like the backend its spec names: the same
``capabilities``, the same ``describe()`` (so the config hash is that of a
one-process run of the same model, whatever threads either uses: threads,
replicas and the address are runtime, in ``runtime_facts()``), the same
methods. Each call's request list is cut into contiguous shards, one per live
actor, asked in parallel and answered in request order. The runner stays in
the driver and stores the rows after every call, so ``samples.jsonl``, resume
and ``results.json`` are those of a one-process run.

Rules:

- A request that fails inside a replica fails the call with that exception
  (the runner then asks one by one and records the failing sample).
- A replica that dies (killed, out of memory) is dropped and its shard is sent
  again, once, to a live replica; a shard whose second replica dies too fails
  with :class:`WorkerLostError` (the runner records its samples with the cause).
  With no replica left the run stops with :class:`FatalBackendError`; every
  finished sample is already stored and ``--resume`` finishes the run.
- Read-along requests of one call go to a single replica (its session reads on
  through the book); every other kind is sharded.

``import ray`` happens only in :mod:`longread.scaleout.ray_session`, when a Ray backend is made.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Sequence
from typing import Any

from longread.errors import LongreadError
from longread.models.errors import FatalBackendError
from longread.models.incidents import Incident
from longread.models.requests import READ_ALONG
from longread.scaleout.ray_session import death_cause, death_errors, start_ray

__all__ = [
    "RayBackend",
    "WorkerLostError",
    "wrap_with_ray",
]

UNSHARDED_KINDS = frozenset({READ_ALONG})
DEFAULT_CPU_WORKERS = 2


class WorkerLostError(LongreadError):
    """The replicas asked for a shard died twice: its requests are not answered (their samples fail)."""


class Replica:
    """One model replica inside a Ray actor (this class is wrapped by ``ray.remote`` at run time)."""

    def __init__(self, spec: str, load_options: dict[str, Any]) -> None:
        from longread.evaluation.dispatch import capabilities_of
        from longread.models.registry import load_backend

        self.backend: Any = load_backend(spec, **load_options)
        self.capabilities = capabilities_of(self.backend)

    def facts(self) -> dict[str, Any]:
        runtime = getattr(self.backend, "runtime_facts", None)
        return {
            "describe": dict(self.backend.describe()),
            "capabilities": sorted(self.capabilities),
            "preferred_batch": int(getattr(self.backend, "preferred_batch", 1)),
            "name": str(getattr(self.backend, "name", type(self.backend).__name__)),
            "runtime": dict(runtime()) if callable(runtime) else {},
        }

    def count_tokens(self, texts: list[str]) -> list[int] | None:
        """Each text's tokens as the model counts them (None: the model cannot count its tokens)."""
        count = getattr(self.backend, "count_tokens", None)
        return [int(count(text)) for text in texts] if callable(count) else None

    def call(self, kind: str, requests: list[Any]) -> tuple[bool, Any]:
        """(True, answers) or (False, the exception) — returned, not raised, so it arrives unwrapped."""
        from longread.evaluation.dispatch import ask

        try:
            return True, ask(self.backend, kind, requests, None)
        except Exception as exc:
            return False, _portable(exc)


def _portable(exc: Exception) -> Exception:
    """The exception itself when it survives pickling, else a RuntimeError with its type and message."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}")
    return exc


def _split(requests: Sequence[Any], parts: int) -> list[list[Any]]:
    """Contiguous, nearly equal shards (no empty one), in order."""
    parts = max(1, min(parts, len(requests)))
    size, extra = divmod(len(requests), parts)
    shards: list[list[Any]] = []
    start = 0
    for index in range(parts):
        end = start + size + (1 if index < extra else 0)
        shards.append(list(requests[start:end]))
        start = end
    return shards


class RayBackend:
    """The backend ``spec`` names, replicated on ``workers`` Ray actors; see the module docstring."""

    def __init__(
        self,
        spec: str,
        load_options: dict[str, Any] | None = None,
        *,
        address: str | None = None,
        workers: int | None = 2,
    ) -> None:
        if workers is not None and workers < 1:
            raise LongreadError(f"--ray-workers must be at least 1, got {workers}")
        options = dict(load_options or {})
        threads = options.pop("threads", None)
        if threads is None:
            from longread.models.threads import default_threads

            threads = default_threads()
        gpu = str(options.get("device", "cpu")).startswith("cuda")
        self.ray = start_ray(address, num_cpus=max(workers or DEFAULT_CPU_WORKERS, int(threads)))
        workers = workers or _default_workers(self.ray, gpu)
        per_worker = max(1, int(threads) // workers)
        options["threads"] = per_worker
        actor = self.ray.remote(Replica).options(num_cpus=0 if gpu else per_worker, num_gpus=1 if gpu else 0)
        self.actors: list[Any] = [actor.remote(spec, options) for _ in range(workers)]
        self.live: list[Any] = list(self.actors)
        try:
            facts = self.ray.get([replica.facts.remote() for replica in self.actors])
        except self.ray.exceptions.RayError as exc:
            # A replica whose model does not load dies in its constructor (its exception may not even
            # unpickle here); the last line of Ray's message is the cause.
            self.shutdown()
            cause = ([line for line in str(exc).splitlines() if line.strip()] or [type(exc).__name__])[-1]
            raise LongreadError(f"the Ray replicas of {spec!r} could not start: {cause.strip()}") from None
        described = [fact["describe"] for fact in facts]
        if any(other != described[0] for other in described[1:]):
            raise LongreadError(f"the Ray replicas of {spec!r} describe different models: {described}")
        self._facts: dict[str, Any] = facts[0]
        self.spec = spec
        self.name: str = self._facts["name"]
        self.capabilities = frozenset(self._facts["capabilities"])
        self.preferred_batch = int(self._facts["preferred_batch"]) * workers
        """Each call carries a full batch for every replica."""
        self.address = address
        self.threads_per_worker = per_worker
        self.calls = 0
        self.rescheduled = 0
        """Requests sent again because their replica died."""
        self.lost_workers: list[str] = []
        """Why each dropped replica died."""
        self._incidents: list[Incident] = []
        self._counted: dict[str, int] = {}
        self.on_call: Callable[[int], None] | None = None
        """Called with the call's number before each call (tests kill a replica from here)."""

    # ------------------------------------------------------------ facts

    def describe(self) -> dict[str, str]:
        return dict(self._facts["describe"])

    def runtime_facts(self) -> dict[str, Any]:
        """How the model was reached (recorded in the run's config, not hashed)."""
        return {
            **self._facts["runtime"],
            "ray": {
                "address": self.address or "local",
                "workers": len(self.actors),
                "threads_per_worker": self.threads_per_worker,
            },
        }

    def take_incidents(self) -> list[Incident]:
        """What happened since the last call to this (a replica died, its requests were asked again),
        each naming the requests of its shard; the runner stores it with their samples."""
        taken, self._incidents = self._incidents, []
        return taken

    def shutdown(self) -> None:
        """End the replicas (the Ray session itself stays up for whoever started it)."""
        for replica in self.actors:
            self.ray.kill(replica)
        self.live = []

    def count_tokens(self, text: str) -> int:
        """The text's tokens as the replicas' model counts them (a budget, a planted copy's distance), asked
        of a live replica: the caller may not hold the model's files. Refused where the model cannot."""
        if text not in self._counted:
            for replica in list(self.live):
                try:
                    counted = self.ray.get(replica.count_tokens.remote([text]))
                except self.ray.exceptions.RayError:
                    continue  # a dead replica: ask the next
                if counted is None:
                    raise LongreadError(f"{self.spec}: this model cannot count its tokens")
                self._counted[text] = int(counted[0])
                break
            else:
                raise FatalBackendError(f"no Ray replica of {self.spec!r} is left to count tokens")
        return self._counted[text]

    # ------------------------------------------------------------ requests

    def loglikelihood(self, requests: Sequence[Any], progress: Any = None) -> list[Any]:
        return self.answer("loglikelihood", requests)

    def loglikelihood_rolling(self, requests: Sequence[Any], progress: Any = None) -> list[Any]:
        return self.answer("loglikelihood_rolling", requests)

    def generate(self, requests: Sequence[Any], progress: Any = None) -> list[Any]:
        return self.answer("generate", requests)

    def rank(self, requests: Sequence[Any], progress: Any = None) -> list[Any]:
        return self.answer("rank", requests)

    def read_along(self, requests: Sequence[Any], progress: Any = None) -> list[Any]:
        return self.answer(READ_ALONG, requests)

    def __getattr__(self, kind: str) -> Callable[..., list[Any]]:
        # A kind only some backends answer (a style classifier's ``pair_scores``): asked by its name.
        if kind.startswith("_") or kind not in self.__dict__.get("capabilities", frozenset()):
            raise AttributeError(kind)
        return lambda requests, progress=None: self.answer(kind, requests)

    def answer(self, kind: str, requests: Sequence[Any]) -> list[Any]:
        """Answers to ``requests`` in their order, asked of the live replicas in parallel."""
        self.calls += 1
        if self.on_call is not None:
            self.on_call(self.calls)
        if not requests:
            return []
        if not self.live:
            raise self._no_worker_left()
        shards = [list(requests)] if kind in UNSHARDED_KINDS else _split(requests, len(self.live))
        starts = [sum(len(shard) for shard in shards[:index]) for index in range(len(shards))]
        pending = [(index, shard, self.live[index % len(self.live)], 0) for index, shard in enumerate(shards)]
        answers: dict[int, list[Any]] = {}
        while pending:
            refs = [replica.call.remote(kind, shard) for _, shard, replica, _ in pending]
            retry: list[tuple[int, list[Any], Any, int]] = []
            deaths: list[tuple[int, str, int]] = []
            failure: Exception | None = None
            for (index, shard, replica, attempt), ref in zip(pending, refs, strict=True):
                try:
                    ok, value = self.ray.get(ref)
                except death_errors(self.ray) as died:
                    self._drop(replica, died)
                    deaths.append((index, death_cause(died), attempt))
                    if attempt >= 1:
                        failure = failure or WorkerLostError(
                            f"{len(shard)} {kind} requests: their replica died twice; last cause: {died}"
                        )
                        continue
                    retry.append((index, shard, None, attempt + 1))
                    continue
                if ok:
                    answers[index] = list(value)
                else:
                    failure = failure or value
            if failure is not None:
                outcome = f"not asked again: the call failed ({type(failure).__name__})"
            elif retry and not self.live:
                outcome = "not asked again: no replica is left"
            else:
                outcome = "asked again of another replica"
            for index, cause, attempt in deaths:
                self._incidents.append(
                    Incident(
                        f"a Ray replica died ({cause}) while answering {len(shards[index])} {kind} requests; "
                        + ("it died again on its second replica" if attempt >= 1 else outcome),
                        tuple(range(starts[index], starts[index] + len(shards[index]))),
                    )
                )
            if failure is not None:
                raise failure
            if retry and not self.live:
                raise self._no_worker_left()
            self.rescheduled += sum(len(shard) for _, shard, _, _ in retry)
            pending = [
                (index, shard, self.live[slot % len(self.live)], attempt)
                for slot, (index, shard, _, attempt) in enumerate(retry)
            ]
        return [answer for index in range(len(shards)) for answer in answers[index]]

    def _drop(self, replica: Any, cause: BaseException) -> None:
        if replica in self.live:
            self.live.remove(replica)
            self.lost_workers.append(death_cause(cause))

    def _no_worker_left(self) -> FatalBackendError:
        causes = "; ".join(self.lost_workers) or "none started"
        return FatalBackendError(
            f"every Ray worker of {self.spec!r} is gone ({causes}); finished samples are stored — "
            "fix the cause and run again with --resume"
        )


def _default_workers(ray: Any, gpu: bool) -> int:
    """One replica per GPU of the cluster for a CUDA model; :data:`DEFAULT_CPU_WORKERS` on CPUs."""
    if not gpu:
        return DEFAULT_CPU_WORKERS
    gpus = int(ray.cluster_resources().get("GPU", 0))
    if gpus < 1:
        raise LongreadError(
            "--device cuda on Ray, but the Ray cluster has no GPU: start its nodes with GPUs "
            "(`ray start … --num-gpus N`) or run on the CPU (--device cpu)"
        )
    return gpus


def wrap_with_ray(
    spec: str,
    load_options: dict[str, Any] | None = None,
    *,
    address: str | None = None,
    workers: int | None = 2,
) -> RayBackend:
    """The backend ``load_backend(spec, **load_options)`` would give, as ``workers`` Ray replicas.

    ``load_options`` are :func:`longread.models.registry.load_backend`'s keywords; ``threads`` (default:
    all cores) is split between the replicas. ``address`` None starts a local Ray. ``workers`` None: one
    replica per GPU of the cluster for ``device="cuda"`` (each actor holds one GPU), else 2.
    """
    return RayBackend(spec, load_options, address=address, workers=workers)
