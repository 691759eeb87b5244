"""A model behind an OpenAI-compatible server (vLLM, SGLang, llama.cpp, a hosted API) as a ``Backend``.

Requests are tokenised and cut here, by the rules of the local backend (``tokens.encode_request``
for the lm-eval boundary and truncation, ``prompt_fit`` for documents), and sent as token ids, so
the server reads exactly the tokens a local run reads. Chat prompts go to ``/v1/chat/completions``
and the server applies the model's chat template. Up to ``concurrency`` requests are in flight at
once; the answers come back in request order.
"""

from __future__ import annotations

import logging
import platform
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from typing import Any, TypeVar

import longread
from longread.models.errors import ContextTooLongError, FatalBackendError
from longread.models.prompt_fit import FittedPrompt, fit_document_prompt
from longread.models.requests import (
    GENERATE,
    LANGUAGE_MODEL_CAPABILITIES,
    ChatPrompt,
    ContinuationScore,
    DocumentPrompt,
    GenerateRequest,
    GenerateResult,
    LoglikelihoodRequest,
    LoglikelihoodResult,
    Progress,
    RollingRequest,
    RollingResult,
)
from longread.models.served.client import ServedClient
from longread.models.served.protocol import (
    generation_payload,
    greedy_ids_payload,
    parse_generation,
    parse_token_ids,
)
from longread.models.served.scoring import PromptScorer
from longread.models.served.self_check import SelfCheck
from longread.models.served.spec import ServedConfig
from longread.models.served.tokenizer import ServedTokenizer
from longread.models.tokens import (
    encode_request,
    keep_last_text_tokens,
    rolling_windows,
    start_length,
    text_token_count,
)

logger = logging.getLogger(__name__)
T = TypeVar("T")

SCORING_HEADROOM = 2
"""Positions kept free when scoring: vLLM needs room for one (unused) token after an echoed prompt."""


class ServedBackend:
    """Answers log-likelihood, rolling log-likelihood and generation requests through a server."""

    def __init__(
        self,
        config: ServedConfig,
        *,
        spec: str,
        client: ServedClient,
        tokenizer: ServedTokenizer,
        server_max_length: int,
        check: SelfCheck,
        server: str = "",
    ) -> None:
        self.config = config
        self.spec = spec
        self.name = config.model
        self.client = client
        self.tokenizer = tokenizer
        self.server_max_length = server_max_length
        self.max_length = config.max_length or server_max_length
        self.check = check
        self.server = server
        self.scorer = PromptScorer(client, config.model, tokenizer, check.settings)
        self.capabilities = LANGUAGE_MODEL_CAPABILITIES if check.passed else frozenset({GENERATE})
        self.preferred_batch = 2 * config.concurrency
        """Requests per call that keep every worker busy while the slowest answer is awaited."""
        self._pool = ThreadPoolExecutor(max_workers=config.concurrency, thread_name_prefix="longread-served")

    def __repr__(self) -> str:
        return f"ServedBackend({self.config.base_url!r}, model={self.name!r})"

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    # ------------------------------------------------------------ concurrency

    def _run_all(
        self, jobs: Sequence[Callable[[], T]], cost: Callable[[T], int], progress: Progress | None
    ) -> list[T]:
        """Every job on the pool; results in job order. A fatal error (server gone) cancels what has not
        started and is raised at once; otherwise the first failure (in job order) is raised after all
        jobs ended, so the runner can ask again one by one and keep the answers that came."""
        futures: list[Future[T]] = [self._pool.submit(job) for job in jobs]
        pending = set(futures)
        while pending:
            done, pending = wait(pending, return_when=FIRST_EXCEPTION)
            for future in done:
                error = future.exception()
                if isinstance(error, FatalBackendError):
                    for other in pending:
                        other.cancel()
                    raise error
                if error is None and progress is not None:
                    progress(cost(future.result()))
        for future in futures:
            error = future.exception()
            if error is not None:
                raise error
        return [future.result() for future in futures]

    # ------------------------------------------------------------ log-likelihood

    def _scoring_window(self) -> int:
        return min(self.max_length, self.server_max_length - SCORING_HEADROOM)

    def _loglikelihood_one(self, request: LoglikelihoodRequest) -> LoglikelihoodResult:
        group = encode_request(self.tokenizer, request, self._scoring_window())
        context = list(group.context)
        prompts = [context + list(continuation) for continuation in group.continuations]
        spans = self.scorer.score(prompts, [len(context)] * len(prompts))
        return LoglikelihoodResult(
            scores=tuple(
                ContinuationScore(
                    logprob=span.logprob,
                    n_tokens=len(tokens),
                    n_tokens_original=original,
                    is_greedy=span.is_greedy,
                    scored_text=self.tokenizer.decode(list(tokens)),
                )
                for span, tokens, original in zip(
                    spans, group.continuations, group.continuation_tokens_original, strict=True
                )
            ),
            context_tokens_original=group.context_tokens_original,
            context_tokens_kept=group.context_tokens_kept,
            control=group.control,
            read_ids=group.read_ids,
        )

    def loglikelihood(
        self, requests: Sequence[LoglikelihoodRequest], progress: Progress | None = None
    ) -> list[LoglikelihoodResult]:
        """One server request per log-likelihood request: all its continuations in one ``prompt`` list."""
        self._require_scoring()
        jobs = [lambda r=request: self._loglikelihood_one(r) for request in requests]
        return self._run_all(
            jobs, lambda r: r.context_tokens_kept + sum(s.n_tokens for s in r.scores), progress
        )

    def _rolling_one(self, request: RollingRequest) -> RollingResult:
        start = self.tokenizer.start_token_id
        ids = self.tokenizer.encode(request.text)
        tokens = ids[start_length(ids, start) :]
        windows = list(rolling_windows(tokens, self.tokenizer.prefix_token_id, self._scoring_window(), start))
        total = 0.0
        for context, continuation in windows:
            (span,) = self.scorer.score([context + continuation], [len(context)])
            total += span.logprob
        return RollingResult(logprob=total, n_tokens=len(tokens))

    def loglikelihood_rolling(
        self, requests: Sequence[RollingRequest], progress: Progress | None = None
    ) -> list[RollingResult]:
        self._require_scoring()
        jobs = [lambda r=request: self._rolling_one(r) for request in requests]
        return self._run_all(jobs, lambda r: r.n_tokens, progress)

    def _require_scoring(self) -> None:
        if not self.check.passed:
            raise FatalBackendError(
                f"{self.config.base_url} ({self.name}) is not used for log-likelihood: the self-check "
                f"{self.check.summary()}"
            )

    def token_logprobs(
        self, prompts: Sequence[Sequence[int]], progress: Progress | None = None
    ) -> list[list[float]]:
        """The log-prob of every token after the first of each prompt (token ids, sent as given)."""
        self._require_scoring()
        jobs = [lambda p=prompt: list(self.scorer.token_logprobs([p])[0]) for prompt in prompts]
        return self._run_all(jobs, len, progress)

    # ------------------------------------------------------------ generation

    def _prepare(self, request: GenerateRequest) -> tuple[Any, FittedPrompt | None]:
        """Token ids (fitted like the local backend fits them), or chat messages; document sizes."""
        if isinstance(request.prompt, ChatPrompt):
            return request.prompt.as_messages(), None
        room = self.max_length - request.max_tokens
        if room < 1:
            raise ContextTooLongError(
                f"max_tokens={request.max_tokens} leaves no room for a prompt in {self.name}'s window of "
                f"{self.max_length} tokens; lower max_tokens"
            )
        start = self.tokenizer.start_token_id
        if isinstance(request.prompt, DocumentPrompt):
            fitted = fit_document_prompt(request.prompt, self.tokenizer.encode_plain, room, bos_id=start)
            ids = list(fitted.token_ids) or [self.tokenizer.prefix_token_id]
            return ids, fitted
        ids = self.tokenizer.encode(request.prompt) or [self.tokenizer.prefix_token_id]
        return keep_last_text_tokens(ids, room - start_length(ids, start), start), None

    def _generate_one(self, request: GenerateRequest) -> GenerateResult:
        prompt, document = self._prepare(request)
        chat = isinstance(request.prompt, ChatPrompt)
        # What was sent as token ids (a chat is rendered by the server, a text prompt re-tokenised there).
        sent_ids = None if chat else tuple(prompt[start_length(prompt, self.tokenizer.start_token_id) :])
        if not chat and self.check.settings.prompt_form == "text":
            prompt, sent_ids = self.tokenizer.decode(prompt), None
        payload = generation_payload(
            self.name,
            prompt,
            max_tokens=request.max_tokens,
            stop=request.stop,
            temperature=request.temperature,
            seed=request.seed,
        )
        path = "/chat/completions" if chat else "/completions"
        answer = self.client.post(
            path, payload, lambda body: parse_generation(body, chat=chat, stop=request.stop)
        )
        return GenerateResult(
            text=answer.text,
            n_prompt_tokens=answer.n_prompt_tokens,
            n_generated_tokens=answer.n_generated_tokens,
            stopped_by=answer.stopped_by,
            document_tokens_original=document.document_tokens_original if document else None,
            document_tokens_kept=document.document_tokens_kept if document else None,
            control=document.control if document else None,
            prompt_ids=sent_ids,
        )

    def generate(
        self, requests: Sequence[GenerateRequest], progress: Progress | None = None
    ) -> list[GenerateResult]:
        """Greedy unless a request sets a temperature (then the server samples with the request's seed)."""
        jobs = [lambda r=request: self._generate_one(r) for request in requests]
        return self._run_all(jobs, lambda r: r.n_prompt_tokens + r.n_generated_tokens, progress)

    def greedy_ids(
        self, prompts: Sequence[Sequence[int]], max_tokens: int, progress: Progress | None = None
    ) -> list[list[int]]:
        """Exactly ``max_tokens`` greedy token ids after each prompt of token ids (sent as given: no start
        token added), as the server generated them — what memorisation by extraction compares."""
        jobs = [
            lambda p=prompt: self.client.post(
                "/completions", greedy_ids_payload(self.name, p, max_tokens), parse_token_ids
            )
            for prompt in prompts
        ]
        return self._run_all(jobs, len, progress)

    # ------------------------------------------------------------ facts

    def count_tokens(self, text: str) -> int:
        return text_token_count(self.tokenizer.encode(text), self.tokenizer.start_token_id)

    def runtime_facts(self) -> dict[str, str]:
        """How this run reached the server: recorded in the run config but not hashed, so a run can be
        resumed against the same model at another address or with other concurrency, timeout, retries."""
        config = self.config
        return {
            "spec": self.spec,
            "base_url": config.base_url,
            "api_key_env": config.api_key_env,
            "concurrency": str(config.concurrency),
            "timeout_s": f"{config.timeout:g}",
            "max_retries": str(config.max_retries),
            # The server's own version, when its /version answered at start (a transient failure there
            # must not change the run's identity, so it is recorded here, not hashed).
            "server": self.server or "unknown (/version did not answer)",
            # The client side: longread's own OpenAI-protocol client (no vLLM or openai package).
            "client": f"longread {longread.__version__} (urllib, Python {platform.python_version()})",
        }

    def describe(self) -> dict[str, str]:
        """What defines this backend's answers (hashed into a run's config) — never the API key."""
        config = self.config
        readers = {
            "prompt_logprobs": "vLLM's prompt_logprobs (token ids and ranks)",
            "echo": "the echoed logprobs block",
        }
        reader = readers.get(self.check.route, "nothing (self-check not passed)")
        echo = f"/v1/completions echo=true logprobs=1 max_tokens={self.check.settings.max_tokens}"
        route = f"{echo}, read from {reader}"
        if not config.self_check:
            route = "/v1/completions echo=true logprobs=1 max_tokens=0 (unchecked: self-check off)"
        form = self.check.settings.prompt_form
        return {
            "backend": "openai",
            "name": self.name,
            "model": config.model,
            "tokenizer": self.tokenizer.description,
            "max_length": str(self.max_length),
            "sampling": "greedy (temperature 0) unless a request sets temperature; seed per request",
            "self_check": self.check.summary() if config.self_check else "skipped (self_check=false)",
            "logprob_route": route,
            "prompt_form": "token ids"
            if form == "ids"
            else "text (the server refused token-id prompts)"
            if config.prompt_form == "auto"
            else "text (prompt_form=text)",
        }
