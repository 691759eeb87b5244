"""What the per-sample browser shows of a NarrativeXL read-along question: the question, its options and
the scenes the model read before it.

The rows (``samples.jsonl``) hold the scores; the texts come from the run's data (a build directory, the
authors' files or ReadingBook JSON), read again only when its digest is the one the run recorded
(:func:`~longread.runs.config.file_sha256`, which hashes a directory by its files) — when the data is gone
or changed the page says so and shows no text.

Per question (``texts[question id]``): the options (text, kind, where they came from), the right one,
and the scenes read before the question (``scenes_read``): the last :data:`SCENES_SHOWN` in full, the
earlier ones folded and counted, the true scene (the evidence, ``retention_demand`` scenes back) always
included and marked. The scenes' texts are kept once per book (``texts["scenes:<book>"]``, index →
text); the questions name their indices.

Where the model's window cut the reading: the row records ``window_start``, the first book token the
model held. The report tokenises the scenes again as the run's model read them (read-along: each piece
``separator + scene`` on its own, no special tokens; ``cut-left``: the joined scenes and prompt, cut as
the backend cuts a context) and gives the scene and character where the held text starts. When the
tokenizer cannot be loaded, or its count differs from the row's ``book_tokens``, no cut is placed: the
page says what the row recorded (tokens), never a guessed position.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from longread.report.html.cut import CutFinder, TokenizerUnavailable, cut_finder
from longread.report.load import RunReport

SCENES_SHOWN = 3
"""Scenes shown in full before each question (the last ones read); earlier ones are folded."""
NARRATIVEXL_VIEW = "narrativexl"
SCENES_VIEW = "narrativexl-scenes"
SCENES_PREFIX = "scenes:"


@dataclass(frozen=True)
class WindowCut:
    """Where the held text starts: scene ``scene`` at character ``offset`` (of the scene's text)."""

    scene: int
    offset: int


def narrativexl_texts(
    run: RunReport, rows: Sequence[dict[str, Any]], settings: dict[str, Any], model: dict[str, Any]
) -> tuple[dict[str, dict[str, Any]], str]:
    """question id → its view (see the module docstring), and the note the page shows under it."""
    from longread.benchmarks.narrativexl.load import load_reading_books
    from longread.errors import LongreadError

    path, problem = _checked_data(run)
    if path is None:
        return {}, problem
    try:
        books = {book.book_id: book for book in load_reading_books(path)}
    except LongreadError as exc:
        return {}, f"the data {path} could not be read ({exc}): questions and scenes cannot be shown"
    separator = str(settings.get("scene_separator", "\n\n"))
    prompt = str(settings.get("prompt") or _default_prompt())
    finder: CutFinder | None = None
    try:
        finder = cut_finder(model)
        how = f"exact (tokenizer {finder.description})"
    except TokenizerUnavailable as exc:
        how = f"not placed: {exc}"
    tokens = BookTokens(finder, separator, prompt) if finder is not None else None
    asked = [(row, *_asked(row, books)) for row in rows]
    if tokens is not None:
        for row, book, _, scenes_read in asked:
            if book is not None and scenes_read > 0 and _cut_from_the_left(row):
                tokens.want_cut(book.book_id, scenes_read, int(row.get("tokens_seen") or 0))
    texts: dict[str, dict[str, Any]] = {}
    for row, book, question, scenes_read in asked:
        if book is None or question is None:
            continue
        cut, cut_note = _window_cut(row, book, scenes_read, tokens)
        texts[question.id] = {
            "view": NARRATIVEXL_VIEW,
            "question": _question_text(settings),
            "options": [
                {
                    "text": option.text,
                    "kind": option.source.kind,
                    "book_id": option.source.book_id,
                    "scene": option.source.scene,
                }
                for option in question.options
            ],
            "true_scene": question.true_scene,
            **_scenes_view(book.scenes[:scenes_read], question.true_scene),
            "scene_texts": scenes_key(book.book_id),
            "cut": None if cut is None else {"scene": cut.scene, "offset": cut.offset},
            "cut_note": cut_note,
        }
    for question_view in list(texts.values()):
        store = texts.setdefault(question_view["scene_texts"], {"view": SCENES_VIEW, "texts": {}})["texts"]
        book = books[question_view["scene_texts"].removeprefix(SCENES_PREFIX)]
        store.update({str(index): book.scenes[index] for index in question_view["scenes"]})
    note = f"questions and scenes read from {path} (sha256 matches the run); the window's cut is {how}"
    return texts, note


def _asked(row: dict[str, Any], books: dict[str, Any]) -> tuple[Any, Any, int]:
    """The row's book and question (None when the data has no such book or question) and the number of
    scenes read before it."""
    book = books.get(str(row.get("book_id")))
    question = next((q for q in book.questions if q.id == row.get("id")), None) if book else None
    if question is None:
        return book, None, 0
    return book, question, int(row.get("scenes_read", question.when_asked + 1))


def _cut_from_the_left(row: dict[str, Any]) -> bool:
    """The row's model read the scenes joined, and its window cut them."""
    return str(row.get("policy", "")).startswith("cut-left") and int(row.get("window_start") or 0) > 0


def _default_prompt() -> str:
    from longread.benchmarks.narrativexl.task import DEFAULT_PROMPT

    return DEFAULT_PROMPT


def scenes_key(book_id: str) -> str:
    """The ``texts`` key of a book's shown scenes (each once per page, however many questions show it)."""
    return SCENES_PREFIX + book_id


def _question_text(settings: dict[str, Any]) -> str:
    """What the model was asked after the scenes: the task's prompt (or, generating, the authors' line)."""
    from longread.benchmarks.narrativexl.task import DEFAULT_PROMPT, QUESTION_PROMPT

    if settings.get("answer_mode") == "generate":
        return QUESTION_PROMPT.strip() + " (the options numbered 1…, then 'Answer:')"
    return str(settings.get("prompt") or DEFAULT_PROMPT).strip()


def _scenes_view(read: Sequence[str], true_scene: int | None) -> dict[str, Any]:
    """The last SCENES_SHOWN scenes read, the true scene too if it is earlier; how many are folded."""
    shown = set(range(max(0, len(read) - SCENES_SHOWN), len(read)))
    if true_scene is not None and 0 <= true_scene < len(read):
        shown.add(true_scene)
    return {
        "scenes_read": len(read),
        "scenes": sorted(shown),
        "folded": len(read) - len(shown),
    }


class BookTokens:
    """What the run's tokenizer makes of the books' scenes, each computed once per book and scenes read
    (questions asked after the same scene share it; a report of many questions tokenises each book once).

    Read-along: the text tokens of each piece (``separator + scene``, the first scene alone), each
    tokenised on its own as the read-along backend does, kept per (book, scene index). Cut from the
    left: one tokenisation of each context (the scenes read, joined, and the prompt) per (book, scenes
    read), placing every kept count asked of it (:meth:`want_cut` names them before the first cut).
    """

    def __init__(self, finder: CutFinder, separator: str, prompt: str) -> None:
        self.finder, self.separator, self.prompt = finder, separator, prompt
        self._ids: dict[tuple[str, int], list[int]] = {}
        self._wanted: dict[tuple[str, int], set[int]] = {}
        self._cuts: dict[tuple[str, int], dict[int, int]] = {}
        self._placed: dict[tuple[str, int], frozenset[int]] = {}  # the counts each context's cuts answer

    def ids(self, book_id: str, index: int, scene: str) -> list[int]:
        """Text tokens of piece ``index`` of the book (``scene`` is its scene ``index``)."""
        key = (book_id, index)
        if key not in self._ids:
            self._ids[key] = list(self.finder.encoder.encode_plain(self.piece(index, scene)))
        return self._ids[key]

    def piece(self, index: int, scene: str) -> str:
        return scene if index == 0 else self.separator + scene

    def decode(self, ids: list[int]) -> str:
        tokenizer = self.finder.tokenizer
        return str(tokenizer.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False))

    def want_cut(self, book_id: str, scenes_read: int, kept: int) -> None:
        """A question cut from the left will ask where ``kept`` tokens of this context start."""
        self._wanted.setdefault((book_id, scenes_read), set()).add(kept)

    def kept_start(self, book_id: str, read: Sequence[str], kept: int) -> int | None:
        """Where the last ``kept`` text tokens of the context of ``read`` (the book's first scenes) start."""
        key = (book_id, len(read))
        wanted = self._wanted.setdefault(key, set())
        if kept not in self._placed.get(key, ()):
            wanted.add(kept)
            context = self.separator.join(read) + self.prompt
            self._cuts[key] = self.finder.kept_starts(context, wanted)
            self._placed[key] = frozenset(wanted)
        return self._cuts[key].get(kept)


def _window_cut(
    row: dict[str, Any], book: Any, scenes_read: int, tokens: BookTokens | None
) -> tuple[WindowCut | None, str]:
    """Where the held text starts, and what the page says about it."""
    read: Sequence[str] = book.scenes[:scenes_read]
    start = int(row.get("window_start") or 0)
    total = int(row.get("book_tokens") or 0)
    policy = str(row.get("policy", ""))
    recorded = f"the row records: book tokens {total}, first held token {start}, policy {policy}"
    if not read:
        return None, f"no scene was read before this question ({recorded})"
    if start <= 0:
        return None, f"the model held every scene read ({recorded})"
    if tokens is None:
        return None, f"the window cut the reading; {recorded} — the place in the text is not shown"
    if policy.startswith("cut-left"):
        offset = tokens.kept_start(book.book_id, read, int(row.get("tokens_seen") or 0))
        if offset is None:
            return None, f"the context was cut; {recorded} — the tokenizer could not place it"
        return _scene_at(read, tokens.separator, offset), f"the context was cut from the left; {recorded}"
    return _read_along_cut(book.book_id, read, tokens, start, total, recorded)


def _read_along_cut(
    book_id: str, read: Sequence[str], tokens: BookTokens, start: int, total: int, recorded: str
) -> tuple[WindowCut | None, str]:
    counts = [len(tokens.ids(book_id, k, scene)) for k, scene in enumerate(read)]
    if sum(counts) != total:
        return None, (
            f"the window cut the reading; {recorded} — the tokenizer here counts {sum(counts)} book "
            "tokens, so the place is not shown"
        )
    before = 0
    for index, count in enumerate(counts):
        if before + count > start:
            piece = tokens.piece(index, read[index])
            ids = tokens.ids(book_id, index, read[index])
            within = start - before
            head = tokens.decode(ids[:within])
            if head + tokens.decode(ids[within:]) != piece:
                return None, f"the window cut the reading in scene {index}; {recorded}"
            lead = 0 if index == 0 else len(tokens.separator)
            offset = max(0, len(head) - lead)
            return WindowCut(index, offset), (
                f"the window cut the reading: the model held scene {index} from character {offset} on; "
                f"{recorded}"
            )
        before += count
    return None, f"the window cut the reading; {recorded}"


def _scene_at(read: Sequence[str], separator: str, offset: int) -> WindowCut:
    """The scene and character of an offset in ``separator.join(read)`` (a separator counts as the next)."""
    position = 0
    for index, scene in enumerate(read):
        end = position + len(scene)
        if offset < end:
            return WindowCut(index, max(0, offset - position))
        position = end + len(separator)
    return WindowCut(len(read) - 1, len(read[-1]))


def _checked_data(run: RunReport) -> tuple[Path | None, str]:
    """The run's data (file or directory) when its digest is the recorded one; else why not."""
    from longread.runs.config import file_sha256

    if not run.data_path:
        return None, "the run did not record its data: questions and scenes cannot be shown"
    recorded = Path(run.data_path)
    path = _find_data(run.path, recorded)
    if path is None:
        return None, f"the data {run.data_path} is not readable here: questions and scenes cannot be shown"
    digest = file_sha256(path)
    if run.data_sha256 and digest != run.data_sha256:
        return None, (
            f"the data {path} has changed since the run (sha256 {digest[:12]}… ≠ "
            f"{run.data_sha256[:12]}…): questions and scenes are not shown"
        )
    return path, ""


def _find_data(run_dir: Path, recorded: Path) -> Path | None:
    """The recorded data path (file or directory); a relative one is also tried against the run
    directory's parents — the digest check that follows keeps a wrong guess out."""
    if recorded.exists():
        return recorded
    if recorded.is_absolute():
        return None
    parents = run_dir.resolve().parents
    return next((parent / recorded for parent in parents if (parent / recorded).exists()), None)
