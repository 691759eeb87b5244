"""The authors' generation prompts (gpt_api_processing.py), as chat prompts, and how an answer is read.

Every prompt is the authors' text verbatim when ``tag=True``: the system
message asks to begin with ``### BEGIN ANSWER ###``, the user message repeats
it, and only the text after the tag is the answer (none or two tags: no
answer). A 135M model rarely writes the tag (measured on 20 real scenes of
Pride and Prejudice with SmolLM2-135M-Instruct: 0 of 20 summaries and 0 of 20
distortions), so the default is ``tag=False``: the same prompts with the tag
sentences removed, the whole response is the answer, and a tag or an
"END ANSWER" marker the model writes anyway is cut off.

The retry prompt (``SummarizeChunkRetry``) is always the authors' verbatim one
with the tag: it is what makes a retry differ from the first attempt, and as
in the authors' code a retry's answer without the tag is the whole response,
kept with a warning.
"""

from __future__ import annotations

from longread.models.requests import ChatPrompt

BEGIN_ANSWER_TAG = "### BEGIN ANSWER ###"
END_ANSWER_MARKERS = ("### END ANSWER ###", "### END_ANSWER ###", "###END ANSWER###", "###END_ANSWER###")
"""What the authors cut off the end of an answer."""

_BEGIN = f" Begin your answer with a {BEGIN_ANSWER_TAG} tag."


def _chat(system: str, user: str) -> ChatPrompt:
    return ChatPrompt(messages=(("user", user),), system=system)


def summarize_chunk(chunk: str, *, tag: bool) -> ChatPrompt:
    """``SummarizeChunk``: the first attempt at a scene's true summary (on the overlapped scene)."""
    system = "You are a helpful assistant that summarizes book snippets."
    if tag:
        return _chat(
            system + _BEGIN,
            f'Summarize the following book excerpt: "{chunk}". '
            f'Start your answer with a "{BEGIN_ANSWER_TAG}" tag.',
        )
    return _chat(system, f'Summarize the following book excerpt: "{chunk}".')


def summarize_chunk_retry(chunk: str) -> ChatPrompt:
    """``SummarizeChunkRetry``, verbatim (always with the tag)."""
    return _chat(
        "You are a helpful assistant that summarizes book snippets." + _BEGIN,
        f'Summarize the following book excerpt: "{chunk}". Make sure to begin your answer with a '
        f"{BEGIN_ANSWER_TAG} tag!",
    )


def create_false_summary(summary: str, *, tag: bool) -> ChatPrompt:
    """``CreateFalseSummary``: same setting, different events, same length."""
    system = "You are a helpful assistant that changes book snippet summaries."
    task = (
        "Take the summary below and rephrase it in such a way that the described events are no longer the "
        "same, even though the setting remains the same. Keep your summary to the same length."
    )
    if tag:
        return _chat(
            system + _BEGIN,
            f'{task} Start your answer with a "{BEGIN_ANSWER_TAG}" tag. \nInital summary: \n"{summary}"',
        )
    return _chat(system, f'{task} \nInital summary: \n"{summary}"')


def create_false_hier_summary(summary: str, *, tag: bool) -> ChatPrompt:
    """``CreateFalseHierSummary``: as ``CreateFalseSummary``, keeping the summary's structure too."""
    system = "You are a helpful assistant that changes book snippet summaries."
    task = (
        "Take the summary below and rephrase it in such a way that the described events are no longer the "
        "same, even though the setting remains the same. Keep your summary to the same length and keep "
        "your summary structure the same."
    )
    if tag:
        return _chat(
            system + _BEGIN,
            f'{task} Start your answer with a "{BEGIN_ANSWER_TAG}" tag. \nInital summary: \n"{summary}"',
        )
    return _chat(system, f'{task} \nInital summary: \n"{summary}"')


def summarize_summaries(meta_chunk: str, *, tag: bool) -> ChatPrompt:
    """``SummarizeSummariesDetailedEvents2`` (the one CreateHiararchicalSummariesTrueOnly.py calls)."""
    system = "You are a helpful assistant that summarizes book scene summaries."
    task = (
        f'Describe the events in following scene summaries into one plot summary: "{meta_chunk}". '
        "Make sure to list the key events and plot developments."
    )
    if tag:
        return _chat(system + _BEGIN, f"{task} Make sure to begin your answer with a {BEGIN_ANSWER_TAG} tag!")
    return _chat(system, task)


def numbered_summaries(summaries: list[str]) -> list[str]:
    """The authors' lines ``"Summary {i}: {s}\\n"`` that meta-chunks are made of."""
    return [f"Summary {i}: {summary}\n" for i, summary in enumerate(summaries)]


def rechunk(pieces: list[str], max_chars: int) -> list[list[int]]:
    """The authors' ``rechunk_book``: consecutive pieces joined while the total stays ``<= max_chars``.

    A piece longer than ``max_chars`` makes a meta-chunk of its own. Returns the piece indices of
    each meta-chunk (join them to get the authors' string).
    """
    groups: list[list[int]] = []
    current: list[int] = []
    length = 0
    for index, piece in enumerate(pieces):
        if length + len(piece) <= max_chars or not current:
            current.append(index)
            length += len(piece)
        else:
            groups.append(current)
            current, length = [index], len(piece)
    if current:
        groups.append(current)
    return groups


def read_answer(response: str, *, tag: bool) -> tuple[str | None, str]:
    """(answer, problem) as the authors read a response; ``problem`` is "" when the answer is usable.

    With ``tag``: the answer is what follows the one ``BEGIN ANSWER`` tag (no tag or two tags: no
    answer). Without: the whole response, minus a tag the model wrote anyway. END ANSWER markers are
    cut off in both cases.
    """
    parts = response.split(BEGIN_ANSWER_TAG)
    if tag and len(parts) == 1:
        return None, f"no {BEGIN_ANSWER_TAG} tag"
    if len(parts) > 2:
        return None, f"several {BEGIN_ANSWER_TAG} tags"
    answer = parts[-1]
    for marker in END_ANSWER_MARKERS:
        answer = answer.split(marker)[0]
    return answer.strip(), ""
