"""Context controls: what the model reads of a context, perturbed beyond its last K tokens.

After Sun, Krishna, Mattarella-Micke & Iyyer 2021 (*Do Long-Range Language Models Actually Use
Long-Range Context?*), Khandelwal et al. 2018 and O'Connor & Andreas 2021: the last ``keep_last`` text
tokens before the question or candidates stay as they are; the tokens before them — the *distant part*
— are

- ``shuffle``: permuted at random, token by token (seeded by the run's seed and the sample's key);
- ``replace``: replaced by as many tokens of one contiguous span of another document of the same data
  (a donor, chosen and placed by the same seed); where no single donor is long enough, spans of several
  are joined, and the record says so;
- ``none``: dropped (the model reads the last ``keep_last`` tokens only);
- ``intact``: left alone (today's behaviour, byte for byte).

All of it in the model's own tokens, applied to exactly what the model would read (after every cut); a
start token (``<bos>``) is not part of the context: it stays first and is never perturbed. With
``keep_last`` at or above the context's length nothing is perturbed and the ids are the intact ones.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

ControlKind = Literal["intact", "shuffle", "replace", "none"]
CONTROL_KINDS: tuple[ControlKind, ...] = ("intact", "shuffle", "replace", "none")


class NoDonorError(ValueError):
    """``replace`` was asked for but the data holds no other document to take tokens from."""


@dataclass(frozen=True, slots=True)
class Donor:
    """Another document of the same data: its id (book or instance) and its text."""

    id: str
    text: str


@dataclass(frozen=True, slots=True)
class ContextControl:
    kind: ControlKind = "intact"
    keep_last: int = 0
    """Text tokens at the end of the context left as they are (0: perturb everything)."""
    seed: int = 0
    """The run's seed; with ``key`` it fixes the permutation, the donor and the span."""
    key: str = ""
    """The sample's key."""
    donors: tuple[Donor, ...] = ()
    """``replace`` only: the documents tokens may come from (never the sample's own)."""

    def __post_init__(self) -> None:
        if self.kind not in CONTROL_KINDS:
            raise ValueError(f"unknown context control {self.kind!r}; use one of {', '.join(CONTROL_KINDS)}")
        if self.keep_last < 0:
            raise ValueError(f"keep_last must be 0 or more tokens, got {self.keep_last}")

    def rng(self) -> random.Random:
        digest = hashlib.sha256(f"{self.seed}\0{self.key}\0{self.kind}".encode()).digest()
        return random.Random(int.from_bytes(digest[:8], "big"))


@dataclass(frozen=True, slots=True)
class ControlRecord:
    """What a control did to one context; stored on the sample's row."""

    control: ControlKind
    keep_last: int
    tokens_perturbed: int
    """Distant tokens shuffled, replaced or dropped (0 when the context is shorter than ``keep_last``)."""
    donors: tuple[str, ...] = ()
    """``replace``: the donor documents the tokens came from, in order (more than one: joined)."""
    read_sha256: str = ""
    """sha256 of the token ids the model read (start token included), as 4-byte little-endian ints."""

    def as_row(self) -> dict[str, object]:
        return {
            "context_control": self.control,
            "keep_last": self.keep_last,
            "tokens_perturbed": self.tokens_perturbed,
            "donors": list(self.donors),
            "donors_joined": len(self.donors) > 1,
            "read_sha256": self.read_sha256,
        }


def ids_sha256(ids: Sequence[int]) -> str:
    return hashlib.sha256(b"".join(int(i).to_bytes(4, "little") for i in ids)).hexdigest()


def apply_control(
    ids: Sequence[int],
    control: ContextControl,
    *,
    start_tokens: int,
    encode_plain: Callable[[str], list[int]],
    question_tokens: int = 0,
) -> tuple[list[int], ControlRecord]:
    """``ids`` as the model reads them under ``control``; ``start_tokens`` (0 or 1) lead ``ids`` and the
    last ``question_tokens`` end them, and neither is ever perturbed (the question is not context).
    ``encode_plain`` tokenises a donor without a start token."""
    end = max(start_tokens, len(ids) - question_tokens)
    head, text, question = list(ids[:start_tokens]), list(ids[start_tokens:end]), list(ids[end:])
    distant = max(0, len(text) - control.keep_last)
    donors: tuple[str, ...] = ()
    if control.kind == "intact" or distant == 0:
        far, distant = [], 0
    elif control.kind == "shuffle":
        far = text[:distant]
        control.rng().shuffle(far)
    elif control.kind == "none":
        far = []
    else:
        far, donors = donor_tokens(control, distant, encode_plain)
    read = head + far + text[distant:] + question
    return read, ControlRecord(control.kind, control.keep_last, distant, donors, ids_sha256(read))


def donor_tokens(
    control: ContextControl, count: int, encode_plain: Callable[[str], list[int]]
) -> tuple[list[int], tuple[str, ...]]:
    """``count`` tokens from one contiguous span of a donor, both chosen by the control's seed; where
    no donor is long enough, whole donors (then a span of the last) joined in the seeded order."""
    if not control.donors:
        raise NoDonorError(
            f"sample {control.key!r}: `replace` needs another document of the same data to take tokens "
            "from, and there is none (the data holds a single document or book); use shuffle or none"
        )
    rng = control.rng()
    order = sorted(control.donors, key=lambda donor: donor.id)
    rng.shuffle(order)
    encoded = [(donor.id, encode_plain(donor.text)) for donor in order]
    for donor_id, tokens in encoded:
        if len(tokens) >= count:
            start = rng.randrange(len(tokens) - count + 1)
            return tokens[start : start + count], (donor_id,)
    taken: list[int] = []
    used: list[str] = []
    for donor_id, tokens in encoded:
        if tokens:
            taken += tokens[: count - len(taken)]
            used.append(donor_id)
        if len(taken) == count:
            return taken, tuple(used)
    raise NoDonorError(
        f"sample {control.key!r}: `replace` needs {count} tokens but all {len(encoded)} other documents "
        f"together hold {len(taken)}; keep more tokens (--keep-last) or use shuffle or none"
    )
