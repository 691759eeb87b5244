"""Generation requests: the prompt (plain, a document to cut, or a chat), stop strings, sampling, the result.

Only a :class:`DocumentPrompt`'s document is ever cut to fit the window; a
:class:`ChatPrompt` is never cut. A result says why generation stopped
(``STOPPED_BY_*``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from longread.models.requests.control import ContextControl, ControlRecord
from longread.models.requests.schema import SCHEMA_VERSION, _positive_or_none

CutSide = Literal["left", "right", "middle"]


@dataclass(frozen=True, slots=True)
class DocumentPrompt:
    """A prompt whose long ``document`` may be cut but whose ``instruction`` never is.

    The model reads ``preamble + document + instruction`` (put separators inside
    them). When it does not fit, only the document loses tokens, from ``cut``:
    ``left`` drops its start, ``right`` its end, ``middle`` its middle. The result
    records the document's tokens before and after the cut.
    """

    document: str
    instruction: str
    preamble: str = ""
    cut: CutSide = "left"
    max_document_tokens: int | None = None
    control: ContextControl | None = None
    """A context control on the document's tokens after the cut (the instruction is never touched);
    None = intact."""

    def __post_init__(self) -> None:
        if self.cut not in ("left", "right", "middle"):
            raise ValueError(f"cut must be left, right or middle; got {self.cut!r}")
        _positive_or_none("max_document_tokens", self.max_document_tokens)

    @property
    def text(self) -> str:
        return self.preamble + self.document + self.instruction


@dataclass(frozen=True, slots=True)
class ChatPrompt:
    """A conversation the backend renders with the model's own chat template, ending in the model's turn.

    ``messages`` are ``(role, content)`` pairs in order; ``system``, when given,
    becomes a first ``("system", ...)`` message (otherwise the template's own
    default system message, if it has one, applies). The backend adds the
    generation prompt (``add_generation_prompt=True``) and never cuts a chat
    prompt: one that does not fit the window is an error.
    """

    messages: tuple[tuple[str, str], ...]
    system: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "messages", tuple((str(r), str(c)) for r, c in self.messages))
        if not self.messages:
            raise ValueError("a ChatPrompt needs at least one message")
        for role, _ in self.messages:
            if role not in ("system", "user", "assistant"):
                raise ValueError(f"unknown chat role {role!r}; use system, user or assistant")

    def as_messages(self) -> list[dict[str, str]]:
        """The messages as chat templates take them (``[{"role": ..., "content": ...}]``)."""
        head = [] if self.system is None else [{"role": "system", "content": self.system}]
        return head + [{"role": role, "content": content} for role, content in self.messages]


@dataclass(frozen=True, slots=True)
class GenerateRequest:
    """Generation until a stop string, the end-of-text token or ``max_tokens``.

    Greedy by default (``temperature == 0``). With ``temperature > 0`` each token
    is drawn from ``softmax(logits / temperature)`` by the Gumbel-max rule with
    noise from a ``torch.Generator`` seeded with ``seed`` for this request alone,
    so the same request gives the same text again, whatever else is in its batch.
    """

    prompt: str | DocumentPrompt | ChatPrompt
    stop: tuple[str, ...] = ()
    max_tokens: int = 256
    temperature: float = 0.0
    seed: int = 0
    schema_version: int = field(default=SCHEMA_VERSION, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "stop", tuple(self.stop))
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {self.max_tokens}")
        if any(s == "" for s in self.stop):
            raise ValueError("an empty stop string would stop before the first token")
        if not self.temperature >= 0.0:
            raise ValueError(f"temperature must be 0 (greedy) or positive, got {self.temperature}")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0


STOPPED_BY_STOP = "stop"
STOPPED_BY_EOS = "eos"
STOPPED_BY_MAX_TOKENS = "max_tokens"


@dataclass(frozen=True, slots=True)
class GenerateResult:
    text: str
    """The generated text, cut before the first stop string."""
    n_prompt_tokens: int
    """Prompt tokens the model saw (after left truncation to fit the window)."""
    n_generated_tokens: int
    stopped_by: str
    """``"stop"``, ``"eos"`` or ``"max_tokens"``."""
    document_tokens_original: int | None = None
    """For a :class:`DocumentPrompt`: the document's tokens before fitting …"""
    document_tokens_kept: int | None = None
    """… and after (the instruction is never cut)."""
    control: ControlRecord | None = None
    """What the document prompt's context control did (None: it had none)."""
    prompt_ids: tuple[int, ...] | None = field(default=None, compare=False)
    """The prompt as read, without its start token (None: a chat prompt a server rendered)."""
    kept_cache: Mapping[str, Any] | None = field(default=None, compare=False)
    """Under a KV-cache press: the press, its ratio and the cache it kept (the row's fields)."""
    schema_version: int = field(default=SCHEMA_VERSION, compare=False)
