"""Progress of long work on stderr: items done / total, items/s, tokens/s and ETA.

On a terminal this is a tqdm bar. Elsewhere (CI logs, ``nohup``, pipes) a bar
would fill the log with carriage returns, so a plain line is printed every
``interval_s`` seconds instead, and one at the end.

    with Progress(total=len(todo), desc="chapterbreak", unit="inst", initial=already_done) as progress:
        for item in todo:
            ...
            progress.update(items=1, tokens=n_tokens)
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any, TextIO

from tqdm import tqdm

DEFAULT_LINE_INTERVAL_S = 30.0


class Progress:
    """Items done / total with rates and ETA; rates count only this session's work.

    ``initial`` items (finished by an earlier, resumed session) count towards
    done/total but not towards the rate, so the ETA stays honest after a resume.
    """

    def __init__(
        self,
        total: int | None,
        desc: str = "",
        unit: str = "it",
        *,
        initial: int = 0,
        stream: TextIO | None = None,
        use_bar: bool | None = None,
        interval_s: float = DEFAULT_LINE_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
        enabled: bool = True,
    ) -> None:
        self.total = total
        self.enabled = enabled
        self.desc = desc
        self.unit = unit
        self.done = initial
        self.tokens = 0
        self._initial = initial
        self._stream = stream if stream is not None else sys.stderr
        self._interval_s = interval_s
        self._clock = clock
        self._start = clock()
        self._last_line = self._start
        self._closed = False
        if use_bar is None:
            use_bar = enabled and self._stream.isatty()
        self._bar: Any = (
            tqdm(total=total, desc=desc, unit=unit, initial=initial, file=self._stream, dynamic_ncols=True)
            if use_bar
            else None
        )

    def update(self, items: int = 1, tokens: int = 0) -> None:
        self.done += items
        self.tokens += tokens
        if self.total is not None and self.done > self.total:
            # Work beyond the plan (a retried generation) raises the total: never past 100%.
            self.total = self.done
            if self._bar is not None:
                self._bar.total = self.total
        if self._bar is not None:
            self._bar.update(items)
            if self.tokens:
                self._bar.set_postfix_str(f"{self.tokens_per_s:,.0f} tok/s", refresh=False)
        elif self._clock() - self._last_line >= self._interval_s:
            self._print_line()

    @property
    def elapsed_s(self) -> float:
        return self._clock() - self._start

    @property
    def items_per_s(self) -> float:
        elapsed = self.elapsed_s
        return (self.done - self._initial) / elapsed if elapsed > 0 else 0.0

    @property
    def tokens_per_s(self) -> float:
        elapsed = self.elapsed_s
        return self.tokens / elapsed if elapsed > 0 else 0.0

    @property
    def eta_s(self) -> float | None:
        """Seconds left at the current rate; None when unknown (no total or nothing done yet)."""
        rate = self.items_per_s
        if self.total is None or rate <= 0:
            return None
        return max(0, self.total - self.done) / rate

    def status_line(self) -> str:
        """e.g. ``chapterbreak: 120/480 inst (25.0%), 3.2 inst/s, 4,100 tok/s, elapsed 37s, ETA 1m52s``."""
        parts = [
            f"{self.done}/{self.total} {self.unit}" if self.total is not None else f"{self.done} {self.unit}"
        ]
        if self.total:
            parts[0] += f" ({100 * self.done / self.total:.1f}%)"
        parts.append(f"{self.items_per_s:.2f} {self.unit}/s")
        if self.tokens:
            parts.append(f"{self.tokens_per_s:,.0f} tok/s")
        parts.append(f"elapsed {format_duration(self.elapsed_s)}")
        eta = self.eta_s
        if eta is not None and self.done < (self.total or 0):
            parts.append(f"ETA {format_duration(eta)}")
        prefix = f"{self.desc}: " if self.desc else ""
        return prefix + ", ".join(parts)

    def _print_line(self) -> None:
        if not self.enabled:
            return
        print(self.status_line(), file=self._stream, flush=True)
        self._last_line = self._clock()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._bar is not None:
            self._bar.close()
        else:
            self._print_line()

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def format_duration(seconds: float) -> str:
    """37s, 1m52s, 2h05m."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole}s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
