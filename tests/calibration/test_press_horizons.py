"""The presses' horizon section on paired outcomes made here: the full cache's planted positive is said
first; a press that loses the copy gets no horizon and its loss against the full cache; a full cache that
shows nothing warns that the presses' nulls mean nothing."""

from __future__ import annotations

from pathlib import Path

from longread.calibration.press_horizons import FULL, SettingHorizons, horizon_section
from longread.calibration.verdicts import Family, Outcomes, Placement, compare, copy_horizon, intact_row

PLACE = Placement(distance=512, nearest=512, farthest=560, copy_tokens=64)


def _outcomes(right: list[bool]) -> Outcomes:
    return {(f"i{k}", 1024): (value, f"book{k % 5}") for k, value in enumerate(right)}


def _setting(
    name: str, unplanted: list[bool], planted: list[bool], full: list[bool] | None
) -> SettingHorizons:
    gain = compare(_outcomes(unplanted), _outcomes(planted))
    against = None if full is None else compare(_outcomes(full), _outcomes(planted))
    family = Family([gain, against])
    row = intact_row(1024, PLACE, gain, family)
    adjusted = (None if against is None else family.p(against),)
    return SettingHorizons(name, (row,), (copy_horizon([row], 1024),), (against,), adjusted)


def test_the_positive_comes_first_and_a_press_that_loses_the_copy_is_shown(tmp_path: Path) -> None:
    before = [k % 4 == 0 for k in range(20)]  # 5 of 20 right without the copy, one in each of 5 books
    full = [True] * 20
    lost = before[:]  # the press read as if nothing had been planted
    section = horizon_section(
        [_setting(FULL, before, full, None), _setting("snapkv:0.5", before, lost, full)], 64, tmp_path
    )
    page = "\n".join(section.lines)
    assert "The instrument finds a planted positive: with the full cache, at prefix length 1,024: the copy " \
           "horizon is at least 512 tokens (gain +0.75 [" in page  # fmt: skip
    assert "| 1,024 | snapkv:0.5 | 512 | 20 | 0.25 | 0.25 | +0.00 [−0.16, +0.16] | 1.000 | −0.75 [" in page
    assert "snapkv:0.5 at prefix length 1,024: no planted copy was shown to be used (not even at 512 " \
           "tokens) — the press dropped it" in page  # fmt: skip
    [_, pressed] = section.payload["copy_horizons"]
    assert pressed["against_full"][0]["difference"] == -0.75 and pressed["horizons"][0]["distance"] is None
    assert [path.name for path in section.files] == ["presses_horizon.png"]
    assert section.files[0].stat().st_size > 10_000


def test_a_full_cache_that_shows_no_copy_used_warns_before_any_null(tmp_path: Path) -> None:
    same = [k % 2 == 0 for k in range(20)]
    section = horizon_section([_setting(FULL, same, same, None)], 64, tmp_path)
    assert any(line.startswith("**The full cache shows no planted copy used") for line in section.lines)
