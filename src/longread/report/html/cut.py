"""Where the model's window cut a context, to the character: the tokenizer the run used, re-run.

A run records its model (``config.json``). Its tokenizer is loaded (never the weights: a
``random:`` spec builds its tiny random model only to get the tokenizer that model uses) and
wrapped in the backend's own encoder (:class:`~longread.models.hf.backend.HFTokenEncoder`), so the
prefix is tokenised exactly as :func:`~longread.models.tokens.encode_request` tokenised it:
``prefix.rstrip()`` with the tokenizer's own special tokens, the start token not counted. The model
kept the last ``context_tokens_kept`` text tokens; the kept text starts where the first of them
starts. That offset is found by decoding: the kept tokens decode to an exact suffix of the text
(checked: the dropped and the kept tokens, decoded, must give the text back character for
character), else by the fast tokenizer's character offsets. A cut found by neither is not given,
and the page places that one by the share of tokens, saying so.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SERVER_TOKENIZER = "server"


class TokenizerUnavailable(Exception):
    """The run's tokenizer cannot be loaded here; the message says why."""


@dataclass(frozen=True)
class CutFinder:
    """The exact cut offsets of one run's prefixes."""

    description: str
    """The tokenizer, as the page names it (``smollm2``, ``hf:/models/x``…)."""
    tokenizer: Any
    encoder: Any

    def kept_starts(self, prefix: str, kept_counts: set[int]) -> dict[int, int]:
        """kept text tokens → character offset in ``prefix`` where the kept text starts.

        A count the tokenisation does not allow (more tokens than the prefix has) or whose cut
        cannot be placed to the character is left out.
        """
        stripped = prefix.rstrip()
        if not stripped:
            return {kept: 0 for kept in kept_counts if kept == 0}
        from longread.models.tokens import start_length

        ids = self.encoder.encode(stripped)
        text_ids = ids[start_length(ids, self.encoder.start_token_id) :]
        offsets = self._offsets(stripped, ids, len(ids) - len(text_ids))
        starts: dict[int, int] = {}
        for kept in kept_counts:
            if not 0 <= kept <= len(text_ids):
                continue
            start = self._start(stripped, text_ids, len(text_ids) - kept, offsets)
            if start is not None:
                starts[kept] = start
        return starts

    def _start(
        self, stripped: str, text_ids: list[int], dropped: int, offsets: list[tuple[int, int]] | None
    ) -> int | None:
        if dropped == 0:
            return 0
        if dropped == len(text_ids):
            return len(stripped)
        head, tail = self._decode(text_ids[:dropped]), self._decode(text_ids[dropped:])
        if head + tail == stripped:
            return len(head)
        if offsets is not None and offsets[dropped][0] >= offsets[dropped - 1][1]:
            # Only a cut between characters: a byte-level tokenizer may split one character into tokens
            # that share its span, and a cut between those is not a place in the text.
            return offsets[dropped][0]
        return None

    def decode(self, ids: list[int]) -> str:
        """Token ids back to text, special tokens and spacing as they are."""
        return self._decode(ids)

    def _decode(self, ids: list[int]) -> str:
        return str(self.tokenizer.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False))

    def _offsets(self, stripped: str, ids: list[int], head: int) -> list[tuple[int, int]] | None:
        """Character spans of the text tokens, from a fast tokenizer whose ids match the encoder's."""
        if not getattr(self.tokenizer, "is_fast", False):
            return None
        specials = ids != self.encoder.encode_plain(stripped)
        encoded = self.tokenizer(stripped, add_special_tokens=specials, return_offsets_mapping=True)
        if list(encoded["input_ids"]) != ids:
            return None
        return [(int(a), int(b)) for a, b in encoded["offset_mapping"][head:]]


def model_tokenizer_name(model: Mapping[str, Any]) -> str:
    """The tokenizer a run's model entry (``config.json`` → ``config.model``) scored with.

    Local backends name it by their spec; a served model by its ``tokenizer`` entry.
    """
    backend = str(model.get("backend") or "")
    if backend == "hf":
        return str(model.get("spec") or model.get("weights") or "")
    if backend == "openai":
        return str(model.get("tokenizer") or SERVER_TOKENIZER)
    raise TokenizerUnavailable(
        f"the {backend or 'unrecorded'} backend ({model.get('spec') or model.get('name') or '?'}) "
        "does not score with a Hugging Face tokenizer the report knows"
    )


def cut_finder(model: Mapping[str, Any]) -> CutFinder:
    """The cut finder of a run's model; :class:`TokenizerUnavailable` says why there is none."""
    return _cached_finder(model_tokenizer_name(model))


@functools.lru_cache(maxsize=8)
def _cached_finder(name: str) -> CutFinder:
    from longread.models.hf.backend import HFTokenEncoder

    tokenizer = _load_tokenizer(name)
    return CutFinder(name, tokenizer, HFTokenEncoder(tokenizer))


def _load_tokenizer(name: str) -> Any:
    from longread.errors import LongreadError
    from longread.models.hf import loading

    try:
        if name == "smollm2":
            return loading.smollm2_tokenizer()
        if name.startswith("random:"):
            return loading.load_random(name.removeprefix("random:")).tokenizer
        if name == "gemma3":
            return _from_folder(loading.gemma3_cache_folder())
        if name.startswith("hf:"):
            return _from_folder(Path(name.removeprefix("hf:")).expanduser())
        if name.startswith("gguf:"):
            gguf = Path(name.removeprefix("gguf:")).expanduser()
            return _from_folder(loading.gguf_cache_folder(gguf, gguf.stem.lower()))
    except (LongreadError, OSError, ImportError, ValueError) as exc:
        raise TokenizerUnavailable(f"tokenizer {name} not loadable here: {exc}") from exc
    if name == SERVER_TOKENIZER:
        raise TokenizerUnavailable(
            "the run used the server's own tokenizer (/tokenize), which a report does not ask"
        )
    raise TokenizerUnavailable(f"tokenizer {name or '(unrecorded)'} is not one the report can load")


def _from_folder(folder: Path) -> Any:
    from transformers import AutoTokenizer

    if not folder.is_dir():
        raise OSError(f"no tokenizer folder at {folder}")
    return AutoTokenizer.from_pretrained(folder, local_files_only=True)
