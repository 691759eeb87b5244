"""A local Hugging Face causal LM behind the ``Backend`` contract, scoring with the shared-prefix engine."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import torch
from transformers import PreTrainedTokenizerBase

from longread.models.hf.batch_generate import TIE_MARGIN, Decoded, Decoding, generate_batch, generate_one
from longread.models.hf.loading import LoadedModel, resolve_max_length
from longread.models.hf.pressed.runner import PressRunner, check_question
from longread.models.hf.prompts import prepare_decoding
from longread.models.hf.read_along import READ_ALONG_MODES, ReadAlongEngine, ReadAlongMode
from longread.models.hf.shared_prefix import (
    DEFAULT_TOKEN_BUDGET,
    TokenScore,
    score_group_naive,
    score_group_shared,
)
from longread.models.press_spec import PressError, PressSpec
from longread.models.prompt_fit import FittedPrompt
from longread.models.requests import (
    LANGUAGE_MODEL_CAPABILITIES,
    READ_ALONG,
    ContinuationScore,
    GenerateRequest,
    GenerateResult,
    LoglikelihoodRequest,
    LoglikelihoodResult,
    Progress,
    ReadAlongRequest,
    ReadAlongResult,
    RollingRequest,
    RollingResult,
)
from longread.models.tokens import (
    encode_request,
    rolling_windows,
    start_length,
    text_token_count,
)

Mode = Literal["shared", "naive"]
MODES: tuple[Mode, ...] = ("shared", "naive")


class HFTokenEncoder:
    """lm-eval's ``HFLM.tok_encode`` over a Hugging Face tokenizer."""

    def __init__(self, tokenizer: PreTrainedTokenizerBase) -> None:
        self.tokenizer = tokenizer
        bos = tokenizer.bos_token
        self._bos_text = bos if isinstance(bos, str) and bos else None
        self._start_token_id = self._find_start_token()

    def _find_start_token(self) -> int | None:
        """The BOS the tokenizer puts in front of a text by itself (Gemma, Llama), if any."""
        bos = self.tokenizer.bos_token_id
        if not isinstance(bos, int):
            return None
        with_specials = self.encode("a")
        adds = with_specials[:1] == [bos] and self.encode_plain("a")[:1] != [bos]
        return bos if adds else None

    @property
    def start_token_id(self) -> int | None:
        return self._start_token_id

    @property
    def prefix_token_id(self) -> int:
        token_id = self.tokenizer.bos_token_id
        if token_id is None:
            token_id = self.tokenizer.eos_token_id
        if not isinstance(token_id, int):
            raise ValueError("the tokenizer has neither a BOS nor an EOS token to stand for an empty context")
        return token_id

    def encode(self, text: str) -> list[int]:
        # The tokenizer's own default (SmolLM2 and GPT-2 add no BOS); a text that already starts
        # with the BOS string gets no second one, as in lm-eval.
        if self._bos_text is not None and text.startswith(self._bos_text):
            return list(self.tokenizer.encode(text, add_special_tokens=False))
        return list(self.tokenizer.encode(text))

    def encode_plain(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))


class HFBackend:
    """Scores in ``mode="shared"`` (context read once per request) or ``"naive"`` (one forward each)."""

    capabilities = LANGUAGE_MODEL_CAPABILITIES | {READ_ALONG}

    def __init__(
        self,
        loaded: LoadedModel,
        *,
        spec: str,
        mode: Mode = "shared",
        prefill_chunk: int = 512,
        batch_size: int = 8,
        max_length: int | None = None,
        device: str = "cpu",
        dtype: str = "float32",
        generate_batch_size: int = 8,
        read_along_mode: ReadAlongMode = "session",
        press: PressSpec | None = None,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        if read_along_mode not in READ_ALONG_MODES:
            raise ValueError(f"read_along_mode must be one of {READ_ALONG_MODES}, got {read_along_mode!r}")
        if prefill_chunk < 1 or batch_size < 1 or generate_batch_size < 1:
            raise ValueError("prefill_chunk, batch_size and generate_batch_size must be at least 1")
        self.loaded = loaded
        self.model = loaded.model
        self.tokenizer = loaded.tokenizer
        self.encoder = HFTokenEncoder(loaded.tokenizer)
        self.spec = spec
        self.name = loaded.name
        self.mode: Mode = mode
        self.prefill_chunk = prefill_chunk
        self.batch_size = batch_size
        self.device = device
        self.dtype = dtype
        self.max_length = max_length or resolve_max_length(loaded.model, loaded.tokenizer)
        self.read_along_mode: ReadAlongMode = read_along_mode
        self._read_along: ReadAlongEngine | None = None
        self.preferred_batch = generate_batch_size
        """Generation requests decoded together: pass at least this many per ``generate`` call."""
        self.regenerated_near_ties = 0
        """Batched rows redone one at a time because of a near tie (see ``TIE_MARGIN``)."""
        self.pressing: PressRunner | None = None
        """The KV-cache press every context is read under (None: the full cache)."""
        self.use_press(press)

    def use_press(self, press: PressSpec | None) -> None:
        """Read every later context under ``press`` (None: the full cache); the model stays loaded."""
        if press is not None and self.mode == "naive":
            raise PressError(f"press {press}: a press reads the context once; --mode naive cannot take one")
        self.pressing = PressRunner(self.model, press) if press is not None else None

    def _refuse_press(self, what: str) -> None:
        if self.pressing is not None:
            raise PressError(f"press {self.pressing.spec}: {what}")

    # ------------------------------------------------------------ scoring

    def _score(
        self, context: Sequence[int], continuations: Sequence[Sequence[int]], progress: Progress | None
    ) -> list[TokenScore]:
        if self.mode == "naive":
            return score_group_naive(self.model, context, continuations, progress=progress)
        return score_group_shared(
            self.model,
            context,
            continuations,
            prefill_chunk=self.prefill_chunk,
            batch_size=self.batch_size,
            token_budget=max(DEFAULT_TOKEN_BUDGET, self.prefill_chunk),
            progress=progress,
        )

    def loglikelihood(
        self, requests: Sequence[LoglikelihoodRequest], progress: Progress | None = None
    ) -> list[LoglikelihoodResult]:
        results = []
        for request in requests:
            group = encode_request(self.encoder, request, self.max_length)
            kept = None
            if self.pressing is None:
                scores = self._score(group.context, group.continuations, progress)
            else:
                check_question(self.encoder, request, group)
                scores, record = self.pressing.score(
                    group.context,
                    group.continuations,
                    group.question_tokens,
                    batch_size=self.batch_size,
                    token_budget=max(DEFAULT_TOKEN_BUDGET, self.prefill_chunk),
                    progress=progress,
                )
                kept = record.fields()
            results.append(
                LoglikelihoodResult(
                    scores=tuple(
                        ContinuationScore(
                            logprob=score.logprob,
                            n_tokens=len(tokens),
                            n_tokens_original=original,
                            is_greedy=score.is_greedy,
                            scored_text=str(self.tokenizer.decode(list(tokens))),
                        )
                        for score, tokens, original in zip(
                            scores, group.continuations, group.continuation_tokens_original, strict=True
                        )
                    ),
                    context_tokens_original=group.context_tokens_original,
                    context_tokens_kept=group.context_tokens_kept,
                    control=group.control,
                    read_ids=group.read_ids,
                    kept_cache=kept,
                )
            )
        return results

    def loglikelihood_rolling(
        self, requests: Sequence[RollingRequest], progress: Progress | None = None
    ) -> list[RollingResult]:
        self._refuse_press(
            "a rolling log-likelihood (perplexity) has no context apart from its text to press"
        )
        results = []
        start = self.encoder.start_token_id
        for request in requests:
            ids = self.encoder.encode(request.text)
            tokens = ids[start_length(ids, start) :]  # text tokens; the BOS opens every window instead
            total = 0.0
            for context, continuation in rolling_windows(
                tokens, self.encoder.prefix_token_id, self.max_length, start
            ):
                total += self._score(context, [continuation], progress)[0].logprob
            results.append(RollingResult(logprob=total, n_tokens=len(tokens)))
        return results

    def read_along(
        self, requests: Sequence[ReadAlongRequest], progress: Progress | None = None
    ) -> list[ReadAlongResult]:
        """Questions at reading positions; the reading state carries over between calls while the
        requests move forward in one reading (``read_along_mode="reread"``: rebuilt for every question)."""
        self._refuse_press(
            "a read-along reads the book in chunks and answers from that one growing cache; kvpress "
            "compresses only a prefill from position 0, so it cannot press a reading (use the summaries task)"
        )
        if self._read_along is None:
            self._read_along = ReadAlongEngine(
                self.model,
                self.tokenizer,
                self.encoder,
                self.max_length,
                mode=self.read_along_mode,
                prefill_chunk=self.prefill_chunk,
                batch_size=self.batch_size,
            )
        return self._read_along.answer(requests, progress)

    # ------------------------------------------------------------ generation

    def _prepare(self, request: GenerateRequest) -> tuple[Decoding, FittedPrompt | None]:
        """The prompt's token ids fitted to the window, and (document tokens before, after) for a document."""
        return prepare_decoding(
            request, self.tokenizer, self.encoder, self.max_length, f"{self.spec!r} ({self.name})"
        )

    @property
    def pad_token_id(self) -> int:
        """What fills a left-padded row (masked out, so any id works)."""
        pad = self.tokenizer.pad_token_id
        return pad if isinstance(pad, int) else self.encoder.prefix_token_id

    def generate(
        self, requests: Sequence[GenerateRequest], progress: Progress | None = None
    ) -> list[GenerateResult]:
        """Answers in request order; prompts of similar length are decoded ``preferred_batch`` at a time.

        A batched row whose two best token scores ever came closer than ``TIE_MARGIN`` is regenerated
        one at a time, so the output is the one-at-a-time output (see
        :mod:`longread.models.hf.batch_generate`).
        """
        prepared = [self._prepare(request) for request in requests]
        if self.pressing is not None:
            return [self._generate_pressed(decoding, document, progress) for decoding, document in prepared]
        decoded: list[Decoded | None] = [None] * len(prepared)
        order = sorted(range(len(prepared)), key=lambda i: -len(prepared[i][0].prompt))
        for start in range(0, len(order), self.preferred_batch):
            group = order[start : start + self.preferred_batch]
            if len(group) == 1:
                decoded[group[0]] = self._generate_single(prepared[group[0]][0], progress)
                continue
            outputs = generate_batch(
                self.model,
                self.tokenizer,
                [prepared[i][0] for i in group],
                pad_id=self.pad_token_id,
                prefill_chunk=self.prefill_chunk,
                progress=progress,
            )
            for i, output in zip(group, outputs, strict=True):
                if output.min_gap < TIE_MARGIN:
                    self.regenerated_near_ties += 1
                    output = self._generate_single(prepared[i][0], progress)
                decoded[i] = output
        results = []
        for (decoding, document), maybe in zip(prepared, decoded, strict=True):
            assert maybe is not None
            results.append(self._result(decoding, document, maybe, None))
        return results

    def _result(
        self, decoding: Decoding, document: FittedPrompt | None, output: Decoded, kept: dict[str, Any] | None
    ) -> GenerateResult:
        start_id = self.encoder.start_token_id
        return GenerateResult(
            text=output.text,
            n_prompt_tokens=len(decoding.prompt),
            n_generated_tokens=output.n_generated_tokens,
            stopped_by=output.stopped_by,
            document_tokens_original=document.document_tokens_original if document else None,
            document_tokens_kept=document.document_tokens_kept if document else None,
            control=document.control if document else None,
            prompt_ids=tuple(decoding.prompt[start_length(decoding.prompt, start_id) :]),
            kept_cache=kept,
        )

    def _generate_pressed(
        self, decoding: Decoding, document: FittedPrompt | None, progress: Progress | None
    ) -> GenerateResult:
        """One prompt, its document pressed and its instruction read uncompressed."""
        assert self.pressing is not None
        if document is None:
            raise PressError(
                f"press {self.pressing.spec}: only a document prompt says which part is context to press "
                "and which the instruction (a plain or chat prompt does not)"
            )
        start, end = document.document_span
        if end - start != document.document_tokens_kept:
            raise PressError(
                f"press {self.pressing.spec}: the prompt's document part is {end - start} tokens but "
                f"{document.document_tokens_kept} were read; refusing to press another part of the prompt"
            )
        protect = (document.start_tokens, start)  # the preamble: part of the instruction, kept whole
        output, kept = self.pressing.generate(self.tokenizer, decoding, end, progress, protect)
        return self._result(decoding, document, output, kept.fields())

    def _generate_single(self, decoding: Decoding, progress: Progress | None) -> Decoded:
        return generate_one(
            self.model, self.tokenizer, decoding, prefill_chunk=self.prefill_chunk, progress=progress
        )

    # ------------------------------------------------------------ facts

    def count_tokens(self, text: str) -> int:
        """Text tokens, as every budget counts them (a BOS the tokenizer adds is not one)."""
        return text_token_count(self.encoder.encode(text), self.encoder.start_token_id)

    def runtime_facts(self) -> dict[str, str]:
        """How this process computes (recorded per session in the run, not hashed): threads, batch sizes and
        the prefill chunk change the order of float sums, so a log-prob's last digits, never what it is
        (the runner's ``--recheck`` holds resumed rows to :mod:`longread.models.tolerance`)."""
        return {
            "threads": str(torch.get_num_threads()),
            "interop_threads": str(torch.get_num_interop_threads()),
            "device": str(next(self.model.parameters()).device),
            "dtype": str(next(self.model.parameters()).dtype).removeprefix("torch."),
            "attention": str(getattr(self.model.config, "_attn_implementation", None) or "default"),
            "prefill_chunk": str(self.prefill_chunk),
            "batch_size": str(self.batch_size),
            "generate_batch_size": str(self.preferred_batch),
        }

    def describe(self) -> dict[str, str]:
        """What defines this model's answers (hashed into a run's config); how it computes is in
        :meth:`runtime_facts`."""
        facts = {
            "backend": "hf",
            "spec": self.spec,
            "name": self.name,
            "architecture": type(self.model).__name__,
            "weights": self.loaded.weights,
            "weights_fingerprint": self.loaded.fingerprint,
            "dtype": self.dtype,
            "device": self.device,
            "mode": self.mode,
            "max_length": str(self.max_length),
        }
        if self.read_along_mode != "session":
            facts["read_along_mode"] = self.read_along_mode  # only when not the default: old hashes stay
        start = self.encoder.start_token_id
        if start is not None:
            # Only where a BOS exists, so configs (and hashes) of models without one stay as they were.
            facts["adds_bos"] = "true"
            facts["bos_kept"] = "true"  # every cut keeps it at position 0; budgets count the text after it
            facts["bos_token_id"] = str(start)
        if self.pressing is not None:
            facts.update(self.pressing.describe())
        return facts
