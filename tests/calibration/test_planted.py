"""Planting a copy of the gold in the prefix, on real books with both shipped tokenizers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from longread.benchmarks.chapterbreak.io import load_instances, write_instances
from longread.benchmarks.chapterbreak.planted import SLACK, PlantError, plant_copies, plant_copy
from longread.calibration.run import CalibrationError, CalibrationPlan, check_plan
from tests.calibration.data import bundled_instances
from tests.models_fixtures import backend


@pytest.mark.parametrize("spec", ["smollm2", "gemma3"])
def test_a_planted_copy_is_the_gold_verbatim_at_its_distance_and_the_prefix_keeps_its_length(
    spec: str,
) -> None:
    count = backend(spec).count_tokens  # the model's own tokens, its start token (Gemma's <bos>) not counted
    instances = bundled_instances(2)
    planted = plant_copies(instances, [128, 256], count, copy_tokens=16, seed=3)
    assert [p.id for p in planted[:2]] == [
        f"{instances[0].id}#planted-d128",
        f"{instances[0].id}#planted-d256",
    ]
    assert sum(1 for p in planted if p.planted and p.planted.at_sentence) >= len(planted) - 2
    for original, copy in zip([i for i in instances for _ in (0, 1)], planted, strict=True):
        record = copy.planted
        assert record is not None and record.original_id == original.id
        text = copy.prefix[record.at_char : record.at_char + record.copy_chars]
        assert original.gold.startswith(text) and record.copy_tokens == count(text) <= 16
        assert count(original.gold[: record.copy_chars + 8]) > 16  # the longest opening that fits
        # the copy starts D to D + SLACK tokens (and a token or two of merging) before the prefix's end
        assert record.distance <= record.distance_tokens <= record.distance + SLACK + 4
        assert record.distance_tokens == count(copy.prefix[record.at_char :])
        assert not record.at_sentence or re.search(r"[.!?][\"'”’)\]]*\s+$", copy.prefix[: record.at_char])
        # the prefix keeps its token length: its start lost what the copy added
        assert abs(count(copy.prefix) - count(original.prefix)) <= 1 and copy.prefix_tokens == count(
            copy.prefix
        )
        rest = copy.prefix[: record.at_char] + copy.prefix[record.at_char + record.copy_chars :]
        assert original.prefix[record.cut_chars :].startswith(copy.prefix[: record.at_char])
        assert rest.replace(" ", "").replace("\n", "") in original.prefix.replace(" ", "").replace("\n", "")
        unchanged = {"gold", "negatives", "book_id", "chapter_index", "negative_sources", "chapter_number"}
        assert all(getattr(copy, name) == getattr(original, name) for name in unchanged)


def test_planting_is_seeded_and_byte_identical(tmp_path: Path) -> None:
    count = backend("smollm2").count_tokens
    instances = bundled_instances(2)
    files = []
    for name, seed in (("a", 0), ("b", 0), ("c", 5)):
        write_instances(plant_copies(instances, [128], count, copy_tokens=16, seed=seed), tmp_path / name)
        files.append((tmp_path / name).read_bytes())
    assert files[0] == files[1]
    assert files[0] != files[2]  # another seed picks other boundaries among the near ones
    (again,) = [i for i in load_instances(tmp_path / "a") if i.planted and i.planted.distance == 128][:1]
    assert again.planted is not None and again.planted.seed == 0  # the format reads back, record and all


def test_bad_settings_are_refused_naming_the_instance_or_value() -> None:
    count = backend("smollm2").count_tokens
    instance = bundled_instances(1, ("pg84",))[0]
    with pytest.raises(PlantError, match=rf"{re.escape(instance.id)}: distance 600 does not fit its prefix"):
        plant_copy(instance, 600, count, copy_tokens=16)
    short = instance.model_copy(update={"gold": "It rained."})
    with pytest.raises(
        PlantError, match=rf"{re.escape(instance.id)}: its gold continuation has \d+ tokens, fewer"
    ):
        plant_copy(short, 128, count, copy_tokens=16)
    with pytest.raises(PlantError, match="already planted"):
        plant_copy(plant_copy(instance, 128, count, copy_tokens=16), 128, count, copy_tokens=16)
    plan = CalibrationPlan(distances=(128,), controls=("none",), keep_last=(32, 224), copy_tokens=16)
    check_plan(plan, [256])
    with pytest.raises(CalibrationError, match="distance 200 is at or beyond the prefix length 256"):
        check_plan(CalibrationPlan((200,), ("none",), (32, 300), 16), [256, 512])
    with pytest.raises(CalibrationError, match="--keep-last 120,150 does not bracket distance 128 of 128"):
        check_plan(CalibrationPlan((128,), ("none",), (120, 150), 16), [256])
    with pytest.raises(CalibrationError, match="--controls takes shuffle, replace and none; got intact"):
        check_plan(CalibrationPlan((128,), ("intact",), (32, 224), 16), [256])
