"""Batches in parts by scope: a collection cut down to some of its scopes, the scopes shared out among parts, the
parts the plan gives idle workers, and the bytes of a pool running parts, which are the serial run's."""

from __future__ import annotations

import json
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from agentmemory import datasets
from agentmemory.collection import Collection
from agentmemory.collection.columns import Entries
from agentmemory.evaluation.result_records import tie_means
from agentmemory.experiment import plan as plan_module
from agentmemory.experiment import plan_experiment, read_grid, run_experiment
from agentmemory.experiment import task as task_module
from agentmemory.experiment.executors import WarmPool
from agentmemory.experiment.plan import batches, scope_split
from agentmemory.experiment.task import execute_batch, join_parts, scope_parts, splits_by_scope
from agentmemory.records import MemoryEntry, Query

LONGMEMEVAL = REPO_ROOT / "fixtures" / "longmemeval-sample" / "longmemeval-sample.json"
LOCOMO = REPO_ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json"
NOTES = REPO_ROOT / "fixtures" / "assistant-notes"
SYSTEMS = '["bm25", "bm25[k1=0.9]", "tags", "recency", "hybrid"]'


def grid_file(folder: Path, collection: Path, systems: str = SYSTEMS, extra: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    grid = folder / "grid.toml"
    grid.write_text(
        f'name = "parts"\nk = 5\nsystems = {systems}\n{extra}[statistics]\nn_resamples = 200\n'
        f'[[collections]]\nname = "c"\npath = "{collection.as_posix()}"\n',
        encoding="utf-8",
    )
    return grid


def outputs(folder: Path) -> dict[str, bytes]:
    files = {name: (folder / name).read_bytes() for name in ("results.json", "per_query.csv")}
    files.update({f"tasks/{p.name}": p.read_bytes() for p in sorted((folder / "tasks").iterdir())})
    return files


# -- a collection cut down to some scopes


def tiny() -> Collection:
    entries = (
        MemoryEntry("a1", "apples and pears", scope="a"),
        MemoryEntry("b1", "bananas", scope="b"),
        MemoryEntry("a2", "apple pie", scope="a"),
        MemoryEntry("c1", "cherries", scope="c"),
        MemoryEntry("n1", "no scope at all"),
    )
    queries = (Query("qa", "apple", scope="a"), Query("qb", "banana", scope="b"), Query("qn", "scope"))
    qrels = {"qa": {"a2": 1, "c1": 0}, "qb": {"b1": 1}, "qn": {"n1": 1}}
    return Collection("tiny", entries, queries, qrels, {"tiny.json": "0" * 64})


@pytest.mark.parametrize("columns", [False, True])
def test_only_scopes_keeps_the_scopes_entries_their_queries_and_the_entries_those_judge(columns: bool):
    whole = tiny()
    if columns:
        whole = replace(whole, entries=Entries.of(whole.entries))
    cut = whole.only_scopes(["a"])
    assert [e.id for e in cut.entries] == ["a1", "a2", "c1"]  # c1: judged by qa, in another scope, kept
    assert [q.id for q in cut.queries] == ["qa"] and dict(cut.qrels) == {"qa": {"a2": 1, "c1": 0}}
    assert cut.digest == whole.digest and cut.files == whole.files
    unscoped = whole.only_scopes([None])
    assert [e.id for e in unscoped.entries] == ["n1"] and [q.id for q in unscoped.queries] == ["qn"]
    both = whole.only_scopes(["b", None])
    assert [e.id for e in both.entries] == ["b1", "n1"] and [q.id for q in both.queries] == ["qb", "qn"]
    assert isinstance(cut.entries, Entries) == columns


def test_only_scopes_of_a_loaded_collection_keeps_every_entry_of_its_scopes_as_columns():
    whole = datasets.load(LONGMEMEVAL)
    scopes = sorted({e.scope for e in whole.entries}, key=str)[:2]
    cut = whole.only_scopes(scopes)
    assert isinstance(cut.entries, Entries)
    assert {e.id for e in cut.entries} >= {e.id for e in whole.entries if e.scope in scopes}
    assert all(e == whole.entry(e.id) for e in cut.entries)
    assert {q.scope for q in cut.queries} <= set(scopes) and cut.queries
    assert set(cut.qrels) == {q.id for q in cut.queries} & set(whole.qrels)


# -- the scopes shared out among parts


def sized(sizes: dict[str, int], left_out: tuple[Query, ...] = ()) -> Collection:
    entries = tuple(MemoryEntry(f"{s}{i}", "x", scope=s) for s, n in sizes.items() for i in range(n))
    queries = tuple(Query(f"q{s}", "x", scope=s) for s in sizes)
    qrels = {f"q{s}": {f"{s}0": 1} for s in sizes}
    return Collection("sized", entries, queries, qrels, {}, left_out_queries=left_out)


def test_scope_parts_gives_the_largest_scope_to_the_lightest_part_and_keeps_each_parts_order():
    collection = sized({"a": 1, "b": 5, "c": 3, "d": 3, "e": 2})
    parts = scope_parts(collection, 2)
    # b (5) -> part 0; c (3) -> 1; d (3) -> 1 (3 < 5); e (2) -> 0 (5 < 6); a (1) -> 1 (6 < 7)
    assert parts == [("b", "e"), ("a", "c", "d")]
    assert scope_parts(collection, 2) == parts  # depends on nothing else
    assert scope_parts(collection, 9) == [("b",), ("c",), ("d",), ("e",), ("a",)]  # no more parts than scopes


def test_scope_parts_covers_every_scope_a_question_is_asked_in_and_only_those():
    # qa, qb and qn are judged (scopes a: 2 entries, b: 1, None: 1); c holds entries but no question
    assert scope_parts(tiny(), 2) == [("a",), ("b", None)]
    assert scope_parts(tiny(), 1) == [("a", "b", None)]
    # a question left out of retrieval scoring, in a scope without entries, goes to the lightest part
    collection = sized({"a": 3, "b": 2}, left_out=(Query("qz", "x", scope="z"),))
    assert scope_parts(collection, 2) == [("a",), ("b", "z")]
    assert scope_parts(Collection("none", tiny().entries, (), {}, {}), 2) == []  # no judged question: no part


# -- which batches run in parts


def test_the_plan_gives_idle_workers_parts_of_a_batch_over_several_scopes(monkeypatch, tmp_path: Path):
    monkeypatch.setattr(plan_module, "SCOPE_PART_MIN", 0)
    plan = plan_experiment(read_grid(grid_file(tmp_path, LONGMEMEVAL)))
    scopes = plan.collections[0].scopes
    whole = datasets.load(LONGMEMEVAL)
    assert scopes == len({q.scope for q in whole.judged_queries}) and scopes > 4
    one = batches(plan, plan.tasks, 4)
    assert len(one) == 1  # one collection's tasks: one batch
    assert scope_split(plan, one, 4) == [4]
    assert scope_split(plan, one, 1) == [1] and scope_split(plan, one, None) == [1]
    assert scope_split(plan, one, 100) == [scopes]  # at most one part per scope
    monkeypatch.setattr(plan_module, "SCOPE_PART_MIN", 10**12)
    assert scope_split(plan, one, 4) == [1]  # too light to repay another reading


def test_tasks_that_read_across_scopes_do_not_run_in_parts(monkeypatch, tmp_path: Path):
    monkeypatch.setattr(plan_module, "SCOPE_PART_MIN", 0)
    as_of = plan_experiment(read_grid(grid_file(tmp_path / "asof", LONGMEMEVAL, extra="as_of = true\n")))
    assert not any(splits_by_scope(t.job) for t in as_of.tasks)
    assert scope_split(as_of, batches(as_of, as_of.tasks, 4), 4) == [1]
    notes = plan_experiment(read_grid(grid_file(tmp_path / "notes", NOTES)))
    assert notes.collections[0].scopes == 1
    assert scope_split(notes, batches(notes, notes.tasks, 4), 4) == [1]


# -- the bytes of a pool running parts


@pytest.fixture(scope="module")
def pool():
    with WarmPool(3) as warm:
        yield warm


@pytest.mark.parametrize("collection", [LONGMEMEVAL, LOCOMO], ids=["longmemeval", "locomo"])
def test_a_pool_running_parts_writes_the_serial_bytes(pool: WarmPool, collection: Path, monkeypatch, tmp_path: Path):
    """bm25 (two settings sharing an index), tags, recency and hybrid: every task file, results.json and
    per_query.csv are the serial run's, with each part run by its own worker (one call each)."""
    grid = grid_file(tmp_path, collection)
    serial = run_experiment(read_grid(grid), out=tmp_path / "serial")
    monkeypatch.setattr(plan_module, "SCOPE_PART_MIN", 0)
    plan = plan_experiment(read_grid(grid), pool)
    parts = min(3, plan.collections[0].scopes)
    result = run_experiment(plan, pool, out=tmp_path / "pool")
    assert serial.ok and result.ok and result.computed == serial.computed == 5
    assert result.batches == parts > 1
    assert outputs(tmp_path / "pool") == outputs(tmp_path / "serial")


def _held() -> tuple[int, int]:
    return len(task_module._CACHE), len(task_module._PARTS)


def test_a_worker_running_a_part_keeps_the_part_not_the_whole_collection(pool: WarmPool, monkeypatch, tmp_path: Path):
    """The worker that planned the collection writes it as a snapshot the other two map: the collection's file is
    read once in all; each worker keeps its part only; the snapshot's folder is gone when the run ends."""
    monkeypatch.setattr(plan_module, "SCOPE_PART_MIN", 0)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    task_module.forget_collections()
    for slot in pool.slots:
        pool.submit_to(slot, task_module.forget_collections).result()
    before = sum(pool.submit_to(slot, task_module.reads).result() for slot in pool.slots)
    plan = plan_experiment(read_grid(grid_file(tmp_path, LONGMEMEVAL, systems='["bm25"]')), pool)
    assert run_experiment(plan, pool, out=tmp_path / "out").batches == 3
    assert sum(pool.submit_to(slot, task_module.reads).result() for slot in pool.slots) - before == 1
    assert [pool.submit_to(slot, _held).result() for slot in pool.slots] == [(0, 1)] * 3
    assert list(scratch.iterdir()) == []


def test_parts_whose_snapshot_is_not_there_read_the_collection_and_give_the_same_rows(tmp_path: Path):
    [job] = jobs(tmp_path)
    task_module.forget_collections()
    with_snapshot, without = [], []
    folder = tmp_path / "snap"
    folder.mkdir()
    task_module._collection(job.collection)
    path = task_module.snapshot_for(job.collection, str(folder))
    assert path is not None and Path(path).is_file()
    for i in range(2):
        task_module.forget_collections()
        with_snapshot.append(execute_batch((job,), (i, 2), path)[0][0])
        task_module.forget_collections()
        without.append(execute_batch((job,), (i, 2), str(folder / "gone"))[0][0])
    assert join_parts(with_snapshot) == join_parts(without) and "error" not in join_parts(without)
    task_module.forget_collections()
    assert task_module.snapshot_for(job.collection, str(folder)) is None  # nothing held: nothing read for it


# -- a part's result, and joining them


def jobs(tmp_path: Path, systems: str = '["bm25"]', extra: str = "") -> tuple:
    plan = plan_experiment(read_grid(grid_file(tmp_path, LONGMEMEVAL, systems=systems, extra=extra)))
    return tuple(t.job for t in plan.tasks)


def test_joined_parts_are_the_whole_result_whatever_order_the_parts_came_in(tmp_path: Path):
    [job] = jobs(tmp_path)
    [(whole, _)] = execute_batch((job,))
    parts = [execute_batch((job,), (i, 3))[0][0] for i in range(3)]
    assert all("part" in p and "error" not in p for p in parts)
    assert sum(len(p["per_query"]) for p in parts) == len(whole["per_query"])
    joined = join_parts(parts)
    assert json.dumps(joined) == json.dumps(whole)  # keys in order, rows in order, the same tie means
    assert whole["tie_aware"]  # tie means were there to join
    assert json.dumps(join_parts(parts[::-1])["per_query"]) == json.dumps(whole["per_query"])


def test_a_failed_or_disagreeing_part_makes_the_task_fail_with_one_line(tmp_path: Path):
    [job] = jobs(tmp_path)
    parts = [execute_batch((job,), (i, 2))[0][0] for i in range(2)]
    assert join_parts([parts[0], {"error": "boom"}]) == {"error": "boom"}
    other = dict(parts[1], measures=["P@1"])
    assert join_parts([parts[0], other]) == {
        "error": "the parts of this task disagree on its measures; run it again without parts"
    }


def test_a_part_the_collection_does_not_have_or_a_task_that_cannot_split_is_an_error_line(tmp_path: Path):
    [job] = jobs(tmp_path)
    scopes = len({q.scope for q in datasets.load(LONGMEMEVAL).judged_queries})
    [(outcome, built)] = execute_batch((job,), (0, scopes + 1))
    assert built == 0 and outcome["error"].endswith(
        f"has {scopes} scope(s) with judged questions, so it has no part 1 of {scopes + 1}; plan again"
    )
    [as_of] = jobs(tmp_path / "asof", extra="as_of = true\n")
    [(outcome, _)] = execute_batch((as_of,), (0, 2))
    assert outcome == {"error": "grid: task of bm25 cannot run in parts by scope; plan again"}


def test_tie_means_do_not_depend_on_the_rows_order_and_need_every_row():
    rows = [{"P@1": [0.25, 0.5, 0.0, 1.0]}, {"P@1": [0.75, 1.0, 0.0, 1.0], "RR": [1.0, 1.0, 1.0, 1.0]}]
    means = tie_means(["RR", "P@1"], rows)
    assert means == {"P@1": {"value_under_rule": 0.5, "expected": 0.75, "minimum": 0.0, "maximum": 1.0}}
    assert tie_means(["RR", "P@1"], rows[::-1]) == means
    assert tie_means(["P@1"], [*rows, None]) == {} and tie_means(["P@1"], []) == {}


# -- other calls that read one collection map it too


def test_an_index_group_cut_in_two_maps_the_collection_instead_of_reading_it_again(pool: WarmPool, tmp_path: Path):
    """A BM25 group of 10 settings over 3,000 entries (columns), cut into batches on the pool: planned here, so
    this process writes the snapshot and no worker reads the corpus; the serial bytes; the snapshot's folder
    removed."""
    from agentmemory.datasets.beir import write_collection
    from agentmemory.datasets.synthetic import synthetic_collection

    write_collection(synthetic_collection(seed=5, n_entries=3000, n_queries=120, vocabulary=300), tmp_path / "c")
    corpus = tmp_path / "c" / "corpus.jsonl"  # ids and texts alone: read as columns, which map well
    lines = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines()]
    corpus.write_text("".join(json.dumps({"_id": d["_id"], "text": d["text"]}) + "\n" for d in lines), "utf-8")
    grid = tmp_path / "grid.toml"
    grid.write_text(
        'systems = [{ retriever = "bm25", grid = { k1 = [0.5, 0.9, 1.2, 1.5, 2.0], b = [0.3, 0.75] } }]\n'
        f'[[collections]]\nname = "c"\npath = "{(tmp_path / "c").as_posix()}"\n',
        encoding="utf-8",
    )
    plan = plan_experiment(read_grid(grid))  # loaded here
    assert len(batches(plan, plan.tasks, 3)) > 1
    serial = run_experiment(plan, out=tmp_path / "serial")
    for slot in pool.slots:
        pool.submit_to(slot, task_module.forget_collections).result()
    before = sum(pool.submit_to(slot, task_module.reads).result() for slot in pool.slots)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    old, tempfile.tempdir = tempfile.tempdir, str(scratch)
    try:
        result = run_experiment(plan, pool, out=tmp_path / "pool")
    finally:
        tempfile.tempdir = old
    assert serial.ok and result.ok and result.batches > 1
    assert sum(pool.submit_to(slot, task_module.reads).result() for slot in pool.slots) == before
    assert outputs(tmp_path / "pool") == outputs(tmp_path / "serial")
    assert list(scratch.iterdir()) == []


def test_no_snapshot_of_a_collection_that_reads_quicker_than_it_would_map(tmp_path: Path):
    """Entries as records, or columns holding an object per row, are written and made again one object at a
    time: such a collection is read from its files by every call instead."""
    from agentmemory.collection.columns import Dense

    folder = str(tmp_path)
    records = task_module.CollectionSource(str(NOTES), "beir", (), "d1")
    task_module._keep(records, datasets.load(NOTES))
    assert task_module.snapshot_for(records, folder) is None
    whole = datasets.load(LONGMEMEVAL)
    dense = replace(
        whole, entries=Entries(list(whole.entries.ids), whole.entries.texts, tags=Dense([("t",)] * len(whole.entries)))
    )
    source = task_module.CollectionSource(str(LONGMEMEVAL), "longmemeval", (), dense.digest)
    task_module._keep(source, dense)
    assert task_module.snapshot_for(source, folder) is None
    task_module._keep(source, whole)
    assert task_module.snapshot_for(source, folder) is not None
    held = task_module._CACHE[source.cache_key]  # the mapped collection from then on, the same ids
    assert held is not whole and held == whole and held.entries.ids is whole.entries.ids
    assert not held.entries.texts._buf.flags.writeable  # the snapshot's pages
    task_module.forget_collections()
