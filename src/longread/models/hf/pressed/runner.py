"""A local model's press: checked once on the model, then used for every request of a run.

What is pressed is the context only, as in kvpress's pipeline: a log-likelihood request's context minus
its question (``question_chars``) and its last token; a document prompt's tokens up to the end of the
document (the instruction after it is read uncompressed). The compressed context is read once and shared
by all of a request's candidates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from transformers import PreTrainedModel, PreTrainedTokenizerBase

from longread.models.hf.batch_generate import Decoded, Decoding
from longread.models.hf.pressed.prefill import KeptCache, pressed_prefill
from longread.models.hf.pressed.reading import decode_pressed, read_pressed, score_pressed
from longread.models.hf.shared_prefix import TokenScore
from longread.models.press_spec import PressError, PressSpec, build_press, kvpress_version
from longread.models.requests import LoglikelihoodRequest, Progress
from longread.models.tokens import EncodedGroup, TokenEncoder

CHECK_TOKENS = 96
"""Tokens of a first, throw-away pressed read that proves the press runs on this model before a run."""


class PressRunner:
    def __init__(self, model: PreTrainedModel, spec: PressSpec) -> None:
        implementation = model.config._attn_implementation
        if implementation not in ("sdpa", "eager"):
            raise PressError(
                f"press {spec}: the model uses the {implementation!r} attention; a pressed cache is read "
                "with 'sdpa' or 'eager'"
            )
        self.model = model
        self.spec = spec
        self.press = build_press(spec)
        self.version = kvpress_version() or "unknown"
        # kvpress's own failures (a press that needs another model's files, a rotary embedding it cannot
        # read) show before the run, not as every sample's error.
        vocabulary = int(model.config.vocab_size)
        pressed_prefill(model, [i % vocabulary for i in range(1, CHECK_TOKENS + 1)], self.press, spec)

    def describe(self) -> dict[str, str]:
        """The press as part of the model's identity (hashed into the run's config)."""
        return {"press": str(self.spec), "kvpress": self.version}

    def score(
        self,
        context: Sequence[int],
        continuations: Sequence[Sequence[int]],
        question: int,
        *,
        batch_size: int,
        token_budget: int,
        progress: Progress | None,
    ) -> tuple[list[TokenScore], KeptCache]:
        """Scores of ``continuations`` after ``context``, whose last ``question`` tokens are not pressed
        (nor its last token, read with the candidates)."""
        unpressed = max(question, 1)
        if unpressed >= len(context):
            raise PressError(
                f"press {self.spec}: the context ({len(context)} tokens) is all question; nothing to press"
            )
        cut = len(context) - unpressed
        state = read_pressed(self.model, context[:cut], context[cut:-1], self.press, self.spec, progress)
        scores = score_pressed(
            self.model,
            state,
            context[-1],
            continuations,
            batch_size=batch_size,
            token_budget=token_budget,
            progress=progress,
        )
        return scores, self._checked(replace(state.kept, unpressed=unpressed))

    def generate(
        self,
        tokenizer: PreTrainedTokenizerBase,
        decoding: Decoding,
        pressed: int,
        progress: Progress | None,
        protect: tuple[int, int] = (0, 0),
    ) -> tuple[Decoded, KeptCache]:
        """Decode ``decoding`` with its first ``pressed`` prompt tokens read under the press (the positions
        ``protect`` among them kept whole: a part of the instruction before the document)."""
        prompt = decoding.prompt
        pressed = min(pressed, len(prompt) - 1)
        if pressed - (protect[1] - protect[0]) < 1:
            raise PressError(f"press {self.spec}: the prompt has no context before its instruction to press")
        state = read_pressed(
            self.model, prompt[:pressed], prompt[pressed:-1], self.press, self.spec, progress, protect
        )
        kept = self._checked(replace(state.kept, unpressed=len(prompt) - pressed))
        return decode_pressed(self.model, tokenizer, state, decoding, progress), kept

    def _checked(self, kept: KeptCache) -> KeptCache:
        """``kept``, unless the press kept every entry it was given at a ratio above 0: a press that did
        nothing must not be reported as a pressed read (its row would be a null against the full cache)."""
        if self.spec.ratio > 0 and kept.mean_kept >= kept.pressed:
            raise PressError(
                f"press {self.spec} kept all {kept.pressed} context tokens it was given "
                f"({kept.unpressed + kept.protected} more read uncompressed): it compressed nothing, so this "
                "read is not a pressed one; a context this short cannot show a press"
            )
        return kept


SEAM_TOKENS = 2
"""Tokens a question may gain where it meets the document (a token spanning the seam counts as question)."""


def check_question(encoder: TokenEncoder, request: LoglikelihoodRequest, group: EncodedGroup) -> None:
    """A pressed read leaves the question uncompressed, and nothing else: a count of question tokens
    beyond the question's own (the whole context taken for question, as once happened under a control or
    a cut) would press nothing of the document."""
    if not request.question_chars:
        return
    alone = len(encoder.encode_plain(request.context[len(request.context) - request.question_chars :]))
    if group.question_tokens > alone + SEAM_TOKENS:
        raise PressError(
            f"{group.question_tokens} tokens of the context were taken for its question, which has {alone}: "
            "the document would not be pressed (a bug: please report it with the sample)"
        )
