"""The collection report's helpers: the LoCoMo sample found from anywhere, its parameters, what was loaded,
the hardest queries and the distribution of first-relevant ranks."""

from __future__ import annotations

import pytest
from conftest import REPO_ROOT

from agentmemory import evaluate
from agentmemory.datasets import FORMATS, load
from agentmemory.datasets.longmemeval import GRANULARITIES
from agentmemory.errors import MissingFileError, ReportParameterError
from agentmemory.report import hardest, inputs, ranks, setup_base, tables
from agentmemory.report.params import SAMPLE, collection_setup, sample_collection_path

SAMPLE_FILE = REPO_ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json"
LONGMEMEVAL = "fixtures/longmemeval-sample/longmemeval-sample.json"
GARDEN = REPO_ROOT / "tests" / "data" / "garden-notes"
GOOD = {
    "collection": "",
    "format": "auto",
    "repair": False,
    "k": 5,
    "seed": 7,
    "retrievers": "bm25,tags",
    "output_dir": "",
}


@pytest.fixture(scope="module")
def sample():
    """The LoCoMo sample, strict, both retrievers at k = 5, seed 7."""
    return evaluate(load(SAMPLE_FILE), ("bm25", "tags"), k=5, seed=7)


def _setup(**changes):
    return collection_setup(**{**GOOD, **changes})


def test_sample_is_found_from_any_working_directory(tmp_path, monkeypatch):
    """The default resolves to fixtures/locomo-sample/locomo-sample.json beside the package, whatever the cwd."""
    monkeypatch.chdir(tmp_path)
    assert sample_collection_path() == SAMPLE_FILE
    assert sample_collection_path(REPO_ROOT / "agentmemory") == SAMPLE_FILE


def test_missing_sample_says_what_to_pass(tmp_path):
    """Outside a source checkout (no fixtures/ beside the package) the error names the file and says to pass collection."""
    package = tmp_path / "site-packages" / "agentmemory"
    expected = tmp_path / "site-packages" / "fixtures" / "locomo-sample" / "locomo-sample.json"
    with pytest.raises(MissingFileError) as info:
        sample_collection_path(package)
    assert str(info.value) == (
        f"{expected}: no such file (the LoCoMo sample ships with a source checkout only, fixtures/ is not in the "
        "wheel); pass collection= the path of a LoCoMo .json file or a BEIR-style collection folder"
    )


def test_missing_sample_stops_the_notebook_with_that_message(tmp_path, monkeypatch):
    """collection = "" without the sample: a ReportParameterError carrying the library's message."""
    package = tmp_path / "agentmemory"
    monkeypatch.setattr(setup_base, "sample_collection_path", lambda: sample_collection_path(package))
    with pytest.raises(ReportParameterError, match=r"locomo-sample\.json: no such file \(the LoCoMo sample ships"):
        _setup()


def test_default_setup_reads_the_sample_strictly():
    """Defaults: the sample, read as locomo, strict; source and CLI path carry no absolute path."""
    setup = _setup()
    assert (setup.source, setup.cli_path) == (SAMPLE, "fixtures/locomo-sample/locomo-sample.json")
    assert (setup.format, setup.format_given, setup.repair, setup.output_dir) == ("locomo", "auto", False, None)
    assert setup.collection.name == "locomo-sample"
    assert len(setup.collection.judged_queries) == 8 and len(setup.collection.skipped) == 9


def test_repair_and_a_beir_folder(tmp_path):
    """repair=True keeps 14 queries and lists the repairs; a BEIR folder is read as beir."""
    repaired = _setup(repair=True, output_dir=str(tmp_path))
    assert len(repaired.collection.judged_queries) == 14 and len(repaired.collection.repairs) > 0
    assert repaired.output_dir == tmp_path
    garden = _setup(collection=str(GARDEN), format="beir")
    assert (garden.format, garden.source, garden.collection.name) == ("beir", str(GARDEN), "garden-notes")


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"k": 0}, "k: 0 (int) is less than 1; k must be an integer >= 1"),
        ({"repair": "yes"}, "repair: 'yes' (str) is not a bool; pass repair=True or repair=False"),
        (
            {"format": "csv"},
            "format: 'csv' (str) is not a known name; choose from: " + ", ".join(sorted(["auto", *FORMATS.names()])),
        ),
        (
            {"collection": str(GARDEN), "repair": True},
            "repair: True (bool) is not an option of the beir format; the beir format takes: split "
            "(repair is an option of: beam, locomo, longmemeval)",
        ),
        ({"collection": "no/such.json"}, "no/such.json: no such collection file or folder"),
        (
            {"collection": 3},
            "collection: 3 (int) is not a path; pass a LoCoMo .json file or a collection folder, "
            'or "" for the LoCoMo sample',
        ),
        (
            {"collection": LONGMEMEVAL, "format_options": "granularity"},
            "format_options: 'granularity' (str) is not KEY=VALUE; write e.g. granularity=session (the longmemeval "
            "format takes: granularity, all_turns, user_turns_only, repair)",
        ),
        (
            {"collection": LONGMEMEVAL, "format_options": "granularity=sentence"},
            "granularity: 'sentence' (str) is not a known name; choose from: " + ", ".join(sorted(GRANULARITIES)),
        ),
        (
            {"collection": LONGMEMEVAL, "format_options": "all_turns=maybe"},
            "format_options all_turns: 'maybe' (str) is not a bool; write true or false (or yes/no, on/off, 1/0)",
        ),
        (
            {"collection": LONGMEMEVAL, "format_options": "granularity=turn, granularity=session"},
            "format_options: 'granularity=session' (str) sets granularity a second time; give each option of the "
            "longmemeval format once",
        ),
        (
            {"format_options": "repair=true", "repair": True},
            "format_options: 'repair=true' (str) sets repair a second time; set repair with the repair parameter only",
        ),
        (
            {"collection": str(GARDEN), "format_options": "granularity=turn"},
            "granularity: 'turn' (str) is not an option of the beir format; the beir format takes: split "
            "(granularity is an option of: locomo, longmemeval)",
        ),
        (
            {"format_options": 3},
            'format_options: 3 (int) is not one line of text; pass KEY=VALUE pairs, comma-separated, or ""',
        ),
    ],
    ids=[
        "k=0",
        "repair=yes",
        "format=csv",
        "repair-on-beir",
        "missing-file",
        "not-a-path",
        "option-without-value",
        "unknown-granularity",
        "not-a-bool",
        "option-twice",
        "repair-twice",
        "option-of-another-format",
        "not-text",
    ],
)
def test_bad_parameters_give_the_librarys_message(changes, message):
    """Every rejected value is a ReportParameterError whose text is the library's message, to the letter."""
    with pytest.raises(ReportParameterError) as info:
        _setup(**changes)
    assert str(info.value) == message


def test_collection_command_names_every_option(tmp_path):
    """The equivalent agentmemory eval command: --collection as given, --format when not auto, --repair, --out."""
    setup = _setup(format="locomo", repair=True, output_dir="reports/collection", k=3)
    evaluation = evaluate(setup.collection, setup.retrievers, k=3, seed=7)
    assert inputs.collection_command(setup, evaluation) == (
        "agentmemory eval --collection fixtures/locomo-sample/locomo-sample.json --format locomo --repair "
        "--seed 7 --k 3 --retrievers bm25,tags --out reports/collection/eval-results.json"
    )


def test_format_options_reach_the_loader_and_the_command(tmp_path) -> None:
    """format_options are read with the format's declared types, loaded with, shown in the overview and the
    equivalent command (a built-in option by its own flag)."""
    setup = _setup(
        collection=LONGMEMEVAL,
        format_options="granularity=turn, all_turns=true",
        retrievers="bm25",
        output_dir="out",
    )
    assert dict(setup.format_options) == {"granularity": "turn", "all_turns": True}
    assert dict(setup.collection.settings) == {"granularity": "turn", "indexed_turns": "all"}
    assert setup.collection == load(REPO_ROOT / LONGMEMEVAL, granularity="turn", all_turns=True)
    evaluation = evaluate(setup.collection, setup.retrievers, k=5, seed=7)
    assert inputs.collection_command(setup, evaluation) == (
        f"agentmemory eval --collection {LONGMEMEVAL} --granularity turn --all-turns --seed 7 --k 5 "
        "--retrievers bm25 --out out/eval-results.json"
    )
    overview = inputs.collection_overview(evaluation, setup).text
    assert "read as `longmemeval`, strict: a question with a malformed haystack or date is skipped" in overview
    assert "; granularity = turn, indexed_turns = all" in overview
    notes = inputs.loader_tables(evaluation)[2]
    n = len(setup.collection.notes)
    assert n >= 1 and notes.caption == f"Noted by the loader ({n}), nothing changed" and len(notes.frame) == n
    assert list(notes.frame["note"]) == [note for _, note in setup.collection.notes]
    session = _setup(collection=LONGMEMEVAL, format_options="granularity=session, user_turns_only=false")
    assert dict(session.collection.settings) == {"granularity": "session", "indexed_turns": "user"}
    assert "--format-option user_turns_only=false" in inputs.collection_command(
        session, evaluate(session.collection, "bm25", k=5, seed=7)
    )  # a store_true flag has no --no- form


def test_overview_and_loading_tables(sample):
    """Section 1 from the loaded collection: scopes, groups (5 adversarial outside the headline), every skip."""
    setup = _setup()
    text = inputs.collection_overview(sample, setup).text
    assert "- **Collection:** `locomo-sample` (the shipped LoCoMo sample), read as `locomo`, strict" in text
    assert "- **Memories:** 33 entries in 2 scopes" in text
    assert (
        "- **Queries:** 8 evaluated, 11 relevant judgments; 6 in the headline means, 2 in groups shown separately "
        "(5 adversarial); 9 queries skipped by the loader and 0 repairs (both listed below)"
    ) in text
    assert "sha256" not in text and str(REPO_ROOT) not in text  # the hashes moved to the appendix
    appendix = tables.appendix(sample).text
    assert f"- **Collection files** (sha256), digest `{sample.collection.digest}`:" in appendix
    assert "  - `locomo-sample.json` `" in appendix
    scopes = inputs.scopes_table(sample).frame
    assert scopes[["scope", "entries", "judged queries"]].values.tolist() == [
        ["conv-1", "17", "3"],
        ["conv-2", "16", "5"],
    ]
    groups = inputs.groups_table(sample).frame
    assert groups.values.tolist() == [
        ["1 multi-hop", "1", "3", "yes"],
        ["2 temporal", "2", "3", "yes"],
        ["4 single-hop", "3", "3", "yes"],
        ["5 adversarial", "2", "2", "no, shown separately"],
    ]
    skipped = inputs.skipped_table(sample)
    reasons: dict[str, list[str]] = {}
    for qid, reason in sample.collection.skipped:
        reasons.setdefault(reason, []).append(qid)
    assert skipped.frame.values.tolist() == [[r, str(len(ids)), ", ".join(ids)] for r, ids in reasons.items()]
    assert skipped.caption == "Skipped by the loader (9), left out of every number"
    assert skipped.frame.iloc[0].tolist() == ["evidence 'D1:6; D2:3' holds several ids in one string", "1", "conv-1/q2"]
    assert inputs.repairs_table(sample).caption == "Repaired by the loader (0): nothing was changed"
    assert inputs.headline_note(sample).text == (
        "The headline means are over 6 of the 8 judged queries: 5 adversarial (2 queries) is left out, as most "
        "published numbers do, and shown separately in section 2."
    )


def test_headline_note_without_excluded_groups(seed_evaluation):
    """A BEIR collection leaves no group out."""
    assert inputs.headline_note(seed_evaluation).text == (
        "The headline means are over all 5 judged queries; no group is left out."
    )


def test_hardest_queries_sort_by_rr_then_recall_then_file_order(sample):
    """BM25: RR 0.2 first; two RR 0.5 queries ordered by recall; equal RR and recall keep file order."""
    picked = hardest.hardest_queries(sample, "bm25", 5)
    assert [q.query_id for q in picked] == ["conv-1/q1", "conv-2/q2", "conv-2/q0", "conv-2/q1", "conv-1/q0"]
    assert [(q.metrics["RR"], round(q.metrics["R@5"], 4)) for q in picked] == [
        (0.2, 1.0),
        (0.5, 0.3333),
        (0.5, 1.0),
        (1.0, 0.5),
        (1.0, 1.0),
    ]
    everything = hardest.hardest_queries(sample, "tags", 100)
    assert len(everything) == 8 and [q.query_id for q in everything][:2] == ["conv-1/q0", "conv-1/q5"]


def test_hardest_n_must_be_positive(sample):
    """n = 0 is rejected with the library's message."""
    with pytest.raises(ValueError, match=r"^n: 0 \(int\) is less than 1; n must be an integer >= 1$"):
        hardest.hardest_queries(sample, "bm25", 0)


def test_hardest_table_shows_evidence_and_what_was_retrieved(sample):
    """Each row: the question, its evidence with the rank it got, and the top k with relevant hits marked."""
    table = hardest.hardest_table(sample, "bm25", 2)
    assert table.caption == (
        "BM25: the 2 hardest of 8 judged queries at k = 5 (lowest RR, then lowest recall; every group included)"
    )
    first = table.frame.iloc[0].to_dict()
    assert {key: first[key] for key in ("query", "group", "text", "RR", "R@5", "first relevant rank")} == {
        "query": "conv-1/q1",
        "group": "2 temporal",
        "text": "When did Priya adopt Biscuit?",
        "RR": "0.20",
        "R@5": "1.00",
        "first relevant rank": "5",
    }
    assert first["relevant"] == "conv-1/D2:6 [rank 5] Priya: Also, we adopted a dog! A…"
    assert first["retrieved"].startswith("1. conv-1/D2:4 (3.69) Priya: Did that help?; 2. conv-1/D3:1 (2.66) ")
    assert first["retrieved"].endswith("; 5. conv-1/D2:6 (2.14, relevant) Priya: Also, we adopted a dog! A…")
    second = table.frame.iloc[1].to_dict()
    assert second["relevant"].count("[not in top 5]") == 2 and "conv-2/D2:3 [rank 2]" in second["relevant"]


def test_first_rank_distribution(sample):
    """Headline queries per first-relevant rank, with 'not found in top 5' as its own bin."""
    assert ranks.first_rank_bins(3) == ["1", "2", "3", "not found in top 3"]
    counts = ranks.first_rank_counts(ranks.first_relevant_frame(sample), 5)
    assert list(counts) == ["BM25", "Tag scorer"]
    assert counts["BM25"] == {
        "1": 3,
        "2": 2,
        "3": 0,
        "4": 0,
        "5": 1,
        "not found in top 5": 0,
    }
    assert counts["Tag scorer"] == {
        "1": 0,
        "2": 0,
        "3": 0,
        "4": 1,
        "5": 0,
        "not found in top 5": 5,
    }
    frame = ranks.first_rank_frame(sample)
    assert list(frame.columns) == ["retriever", "bin", "queries", "share"]
    assert frame["queries"].sum() == 12 and frame.loc[0, "share"] == 0.5


def test_first_rank_bins_come_from_the_first_relevant_frame(sample):
    """One frame of first-relevant ranks: counted from the run's top k or from a deeper run, the bins agree
    (a rank beyond k is 'not found in top k'), and only headline queries are counted."""
    from agentmemory.report import curves

    own = ranks.first_relevant_frame(sample)
    deep = ranks.first_relevant_frame(sample, curves.deep_evaluation(sample))
    assert list(own.columns) == ["retriever", "query", "rank", "in top k", "headline"]
    assert own[["retriever", "query", "in top k", "headline"]].equals(
        deep[["retriever", "query", "in top k", "headline"]]
    )
    assert (own["rank"].isna() | (own["rank"] <= 5)).all() and (deep["rank"] > 5).any()
    assert ranks.first_rank_counts(own, 5) == ranks.first_rank_counts(deep, 5)
    assert int((~own["headline"]).sum()) == 2 * 2  # two adversarial questions, two retrievers
    assert curves.first_relevant_frame is ranks.first_relevant_frame


def test_first_rank_note_checks_the_mrr(sample):
    """The mean of 1/rank over the bins is the MRR of the tables, in words."""
    assert ranks.first_rank_note(sample).text == (
        "- **BM25:** of 6 headline queries, the first relevant hit is at rank 1 for 3, rank 2 for 2, rank 5 for 1; "
        "not found in the top 5 for 0. The mean of 1/rank (0 when not found) is 0.70, the MRR of the tables (0.70).\n"
        "- **Tag scorer:** of 6 headline queries, the first relevant hit is at rank 4 for 1; not found in the top 5 "
        "for 5. The mean of 1/rank (0 when not found) is 0.04, the MRR of the tables (0.04)."
    )


def test_first_rank_numbers_and_figure(sample):
    """The figure's numbers: one row per bin, count and share per retriever; the PNG is drawn the same twice."""
    from agentmemory.report import figures

    frame = ranks.first_rank_frame(sample)
    numbers = figures.first_rank_numbers(frame).frame
    assert numbers.values.tolist() == [
        ["1", "3 (50%)", "0 (0%)"],
        ["2", "2 (33%)", "0 (0%)"],
        ["3", "0 (0%)", "0 (0%)"],
        ["4", "0 (0%)", "1 (17%)"],
        ["5", "1 (17%)", "0 (0%)"],
        ["not found in top 5", "0 (0%)", "5 (83%)"],
    ]
    first, second = figures.first_rank_figure(frame, 5), figures.first_rank_figure(frame, 5)
    assert first.data == second.data and first.data[:8] == b"\x89PNG\r\n\x1a\n"
    assert repr(first) == "Figure: headline queries by rank of the first relevant hit, by system (k = 5)"


def test_locomo_session_granularity_from_the_notebook_parameters() -> None:
    """format_options="granularity=session" loads the LoCoMo sample by session, and the equivalent command says so."""
    locomo = "fixtures/locomo-sample/locomo-sample.json"
    setup = _setup(collection=locomo, format_options="granularity=session", retrievers="bm25", output_dir="out")
    assert dict(setup.collection.settings) == {"granularity": "session"}
    assert setup.collection == load(REPO_ROOT / locomo, granularity="session")
    assert {e.id for e in setup.collection.entries} == {
        f"conv-{c}/S{s}" for c, s in ((1, 1), (1, 2), (1, 3), (2, 1), (2, 2), (2, 3))
    }
    command = inputs.collection_command(setup, evaluate(setup.collection, setup.retrievers, k=5, seed=7))
    assert f"agentmemory eval --collection {locomo} --granularity session " in command
