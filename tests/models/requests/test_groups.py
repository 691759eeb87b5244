"""Request groups (one sample, many requests): flattened into one backend call, regrouped in order, counted
as their parts toward the batch, and the same rows whatever the batch size."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from longread.benchmarks.muld.records import MuldRecord, write_records
from longread.evaluation import RunOptions, make_task, run_task
from longread.evaluation.waves import by_weight as _by_weight
from longread.files import read_text
from longread.models.requests.groups import GroupResult, RequestGroup, ask_grouped
from tests.helpers import SHARED, needs_shared
from tests.models_fixtures import tuned


def test_groups_are_flattened_into_one_call_and_regrouped_in_order() -> None:
    calls: list[list[str]] = []

    def send(flat: list[str]) -> list[str]:
        calls.append(flat)
        return [text.upper() for text in flat]

    answers = ask_grouped(send, ["a", RequestGroup(("b", "c", "d")), "e", RequestGroup(("f",))])
    assert calls == [["a", "b", "c", "d", "e", "f"]]
    assert answers == ["A", GroupResult(("B", "C", "D")), "E", GroupResult(("F",))]
    with pytest.raises(ValueError, match="at least one"):
        RequestGroup(())
    with pytest.raises(ValueError, match="do not nest"):
        RequestGroup((RequestGroup(("a",)),))
    with pytest.raises(RuntimeError, match="answered 1 of 2"):
        ask_grouped(lambda flat: flat[:1], [RequestGroup(("a", "b"))])


def test_a_group_counts_as_its_parts_toward_the_batch() -> None:
    items = [("s1", RequestGroup(("a",) * 5)), ("s2", RequestGroup(("b",) * 5)), ("s3", "c"), ("s4", "d")]
    slices = _by_weight(items, 8)  # type: ignore[arg-type]
    assert [[key for key, _ in part] for part in slices] == [["s1"], ["s2", "s3", "s4"]]
    big = [("s1", RequestGroup(("a",) * 12)), ("s2", "b")]
    assert [[key for key, _ in part] for part in _by_weight(big, 8)] == [["s1"], ["s2"]]  # type: ignore[arg-type]


@needs_shared
def test_rows_do_not_depend_on_the_batch_size(tmp_path: Path) -> None:
    theses = ["0704.2963v1", "0705.0587v1", "0706.1887v4"]
    vlsp = SHARED / "corpus" / "vlsp"
    records = [
        MuldRecord(
            read_text(vlsp / f"{t}.main.txt.gz"),
            (read_text(vlsp / f"{t}.abstract.txt.gz"),),
            json.dumps({"id": t}),
        )
        for t in theses
    ]
    data = tmp_path / "vlsp.jsonl"
    write_records(data, records)
    settings = {"max_sections": "3", "section_tokens": "32", "section_summary_tokens": "4"}
    rows = {}
    for batch in (1, 4, 16):
        run = tmp_path / f"run{batch}"
        options = RunOptions(request_batch=batch, show_progress=False)
        outcome = run_task(
            make_task("muld/vlsp", settings), data, tuned("random:gpt2", batch_size=batch), run, options
        )
        assert outcome.scored == 3 and not outcome.errors
        rows[batch] = (run / "samples.jsonl").read_text().splitlines()
        assert all(len(json.loads(row)["sections_used"]) == 3 for row in rows[batch])
    assert sorted(rows[1]) == sorted(rows[4]) == sorted(rows[16])
