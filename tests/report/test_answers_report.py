"""The answers report's library (agentmemory.report.answers, params.answers_setup): every section is the
analysis layer's numbers, chosen and worded; bad parameters are one line; the command writes the same artifact."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from conftest import REPO_ROOT

from agentmemory.analysis.answers_view import judge_rows, seed_rows
from agentmemory.analysis.artifact import dumps_artifact
from agentmemory.analysis.failures import failure_splits
from agentmemory.analysis.judgments import original_statistics
from agentmemory.analysis.text_tables import interval_cell
from agentmemory.answers import ANSWER_FORMATS
from agentmemory.cli.app import main as cli_main
from agentmemory.datasets.judgment_patch import answer_key_ceiling
from agentmemory.errors import ReportParameterError
from agentmemory.report import answer_report as answers
from agentmemory.report import params
from agentmemory.report.answer_figures import FAILURE_PARTS
from agentmemory.report.display import Folded, Markdown, Png, Table

SAMPLE = "fixtures/locomo-sample/locomo-sample.json"
ERRATA = "fixtures/locomo-sample/errata-sample.json"
ZEP = "fixtures/answers/zep/zep_locomo_grades.json"
MEM0 = "fixtures/answers/mem0-locomo-sample.json"
MEM0_RUN2 = "fixtures/answers/mem0-locomo-sample-run2.json"
EVERMEMOS = "fixtures/answers/evermemos-locomo-sample.json"
DEFAULTS = {
    "collection": "",
    "format": "auto",
    "format_options": "",
    "repair": True,
    "answers": "",
    "answers_format": "",
    "answers_mapping": "",
    "retrievers": "bm25",
    "baseline": "",
    "table_metrics": "",
    "k": 5,
    "seed": 7,
    "attribution": "auto",
    "qrels_patch": ERRATA,
    "claims": "",
    "output_dir": "",
}


def _setup(**changes):
    return params.answers_setup(**{**DEFAULTS, **changes})


@pytest.fixture(scope="module")
def run():
    """The committed report's run: the LoCoMo sample repaired, the authored answers (zep; mem0's two runs;
    evermemos), bm25 beside them, the authored errata as the answer-key patch."""
    setup = _setup()
    evaluation = setup.evaluate()
    return setup, evaluation, setup.statistics(evaluation)


def test_defaults_read_the_authored_samples_in_order(run):
    """answers = "" with the LoCoMo sample: the authored files, zep first (the baseline), mem0 with its two runs;
    relevance follows the retrieved memories; the table's columns are the answer measures, then R@5."""
    setup, evaluation, statistics = run
    assert setup.answers.names == ("zep", "mem0", "evermemos")
    assert [spec.paths for spec in setup.answers.given] == [(ZEP,), (MEM0, MEM0_RUN2), (EVERMEMOS,)]
    assert [len(files) for files in setup.answers.files] == [1, 2, 1]
    assert setup.options.baseline == "zep" == statistics.baseline
    assert evaluation.relevance == "provenance"
    assert statistics.table_measures == ("Judge", "F1", "EM", "BLEU-1", "answer_in_context@5", "R@5")


def test_without_a_ranking_the_table_has_no_recall():
    """Answer files without retrieved memories and no retriever: the columns are the answer measures alone, and
    hits are judged directly."""
    setup = _setup(answers=f"mem0={MEM0},{MEM0_RUN2}", retrievers="", qrels_patch="")
    evaluation = setup.evaluate()
    assert setup.columns(evaluation) == tuple(m for m in evaluation.measures if m.definition.reads_answer)
    assert "R@5" not in map(str, setup.columns(evaluation)) and evaluation.relevance == "direct"


HELP = (
    'pass NAME=FILE[,FILE...] entries separated by ";" (one system\'s seeds by ","), '
    'e.g. "mem0=mem0_results.json;zep=zep_locomo_grades.json"'
)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"collection": SAMPLE},
            f"answers: '' (str) names no answer file; {HELP} "
            '("" means the authored samples with the LoCoMo sample only: collection = "")',
        ),
        (
            {"answers": f"zep={ZEP};;mem0={MEM0}"},
            f"answers: 'zep={ZEP};;mem0={MEM0}' (str) has an empty entry; separate entries by single \";\"",
        ),
        (
            {"answers": f"zep={ZEP};zep={MEM0}"},
            f"answers: 'zep={ZEP};zep={MEM0}' (str) names the system 'zep' twice; give each system once, with its "
            "seeds' files after one NAME= separated by commas",
        ),
        ({"answers": 5}, f"answers: 5 (int) is not one line of text; {HELP}"),
        (
            {"answers_format": "mem1=mem0"},
            "answers_format: 'mem1' (str) is not a known name; choose from: evermemos, mem0, zep",
        ),
        (
            {"answers_format": "mem0"},
            "answers_format: 'mem0' (str) is not NAME=VALUE; pass e.g. \"zep=zep\", NAME a system of answers",
        ),
        (
            {"answers_format": "mem0=nope"},
            "answers_format: 'nope' (str) is not a known name; choose from: "
            + ", ".join(sorted(["auto", *ANSWER_FORMATS.names()])),
        ),
        (
            {"answers_mapping": "zep=x.toml;zep=y.toml"},
            "answers_mapping: 'zep=x.toml;zep=y.toml' (str) names the system 'zep' twice; give each system once",
        ),
        ({"answers": "zep=no/such.json"}, "no/such.json: no such file"),
        ({"baseline": "tags"}, "baseline: 'tags' (str) is not a known name; choose from: bm25, evermemos, mem0, zep"),
        ({"baseline": 3}, 'baseline: 3 (int) is not text; pass a system\'s name, or "" for the first'),
    ],
    ids=[
        "no-answers",
        "empty-entry",
        "twice",
        "not-text",
        "format-system",
        "format-pair",
        "format-name",
        "mapping-twice",
        "missing-file",
        "baseline",
        "baseline-type",
    ],
)
def test_bad_parameters_are_one_line(changes, message):
    """Each bad value stops the setup with the library's one line, naming the parameter (or the file) first."""
    with pytest.raises(ReportParameterError) as info:
        _setup(**changes)
    assert str(info.value) == message


def test_the_verdict_names_the_best_and_every_comparison_with_the_baseline(run):
    """The verdict: the systems and the questions, the most accurate on Judge with its interval and coverage, each
    other system against the baseline with its difference, interval and Holm p, the best on F1."""
    _, evaluation, statistics = run
    text = answers.verdict(evaluation, statistics).text
    n = statistics.queries
    assert text.startswith(
        f"**Verdict.** 3 imported systems, zep, evermemos and mem0, compared on the {n} headline questions of the "
        "agentmemory LoCoMo sample (5 adversarial shown by category only), beside BM25 (no answers: scored on what "
        "it retrieves). "
    )
    judge = {name: cells["Judge"] for name, cells in statistics.intervals.items() if cells["Judge"] is not None}
    best = max(judge, key=lambda name: judge[name].mean)
    cell = judge[best]
    assert f"**{best}** is the most accurate on Judge: {interval_cell(cell, 3)}, over the {cell.n} of {n} " in text
    held = f"(difference, 95% interval; p after Holm's correction over the table's {len(statistics.versus_baseline)}"
    assert f"Against the baseline zep on Judge {held} comparisons): " in text
    for c in statistics.versus_baseline:
        if c.measure == "Judge":
            assert f"{c.system} {answers._signed(c.test.mean_difference)}" in text
            assert f"(p = {c.p_holm_table:.2f}, not significant)" in text
    f1 = {name: cells["F1"] for name, cells in statistics.intervals.items() if cells["F1"] is not None}
    top = max(f1, key=lambda name: f1[name].mean)
    assert (
        f"**{top}** is the highest on F1 (computed here, one definition for all): {interval_cell(f1[top], 3)}." in text
    )
    assert text.endswith("so a gap in Judge may be a gap between judges; F1 compares the answers themselves.")


def test_a_significant_gap_is_called_so(tmp_path):
    """A system whose every verdict is wrong, against one mostly right: the verdict says significantly lower,
    with the Holm-adjusted p the comparison table uses."""
    records = json.loads((REPO_ROOT / MEM0).read_text(encoding="utf-8"))
    for conversation in records.values():
        for record in conversation:
            record["llm_score"] = 0
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps(records), encoding="utf-8")
    setup = _setup(answers=f"mem0={MEM0};wrong={wrong}", retrievers="", qrels_patch="")
    evaluation = setup.evaluate()
    statistics = setup.statistics(evaluation)
    [c] = [c for c in statistics.versus_baseline if c.measure == "Judge"]
    assert c.p_holm_table <= 0.05 and c.test.mean_difference < 0
    text = answers.verdict(evaluation, statistics).text
    assert f"wrong {answers._signed(c.test.mean_difference)} [" in text
    assert f"(p = {c.p_holm_table:.3g}, significantly lower)" in text


def test_the_first_screen_is_the_figure_then_the_comparison_table(run):
    """Figure 1 draws Judge and F1 of the answer systems (BM25, without a value, is named as not drawn), then the
    comparison table with the baseline first and its notation."""
    _, evaluation, statistics = run
    figure, table, notation, *_costs = answers.headline(evaluation, statistics)
    assert isinstance(figure, Png) and figure.data.startswith(b"\x89PNG")
    assert figure.caption.startswith("Figure 1: Judge and F1 of each system over the headline questions")
    assert figure.caption.endswith(
        "Its numbers: the Judge and F1 columns of the table below (BM25: no value, not drawn)"
    )
    assert list(table.frame.columns) == ["System", "Judge", "F1", "EM", "BLEU-1", "answer_in_context@5", "R@5"]
    assert table.frame.iloc[0, 0] == "zep (baseline)"
    assert notation.text.startswith("▲/▼: significantly higher/lower than zep at α = 0.05")
    again, *_ = answers.headline(evaluation, statistics)
    assert again.data == figure.data  # the same bytes every run


def test_categories_table_holds_the_group_intervals(run):
    """Figure 2 and its numbers: every category's interval per system, as the statistics computed them; a system
    with no value on any column of a category has no row there."""
    _, evaluation, statistics = run
    figure, table = answers.by_category(evaluation, statistics)
    assert figure.caption == "Figure 2: Judge and F1 per category, each system side by side, with 95% intervals"
    rows = table.frame
    judge = statistics.groups["2 temporal"].intervals["mem0"]["Judge"]
    row = rows[(rows["category"] == "2 temporal") & (rows["System"] == "mem0")].iloc[0]
    assert row["Judge"] == interval_cell(judge, 2, of=3)
    adversarial = rows[rows["category"] == "5 adversarial (not in the headline)"]
    assert list(adversarial["System"]) == ["BM25", "zep", "evermemos"]  # mem0 has nothing there: no row
    assert ((rows["category"] == "1 multi-hop") & (rows["System"] == "BM25")).any()  # answer_in_context@5


def test_failures_split_each_system_with_retrieval(run):
    """Figure 4's counts are the failure split's cells; mem0 (no retrieved memories) is named as not split."""
    _, evaluation, _ = run
    figure, numbers, shares, note = answers.failures(evaluation)
    assert figure.caption.startswith("Figure 4: where each system's answers went wrong")
    splits = {s.system: s for s in failure_splits(evaluation)}
    assert list(numbers.frame["System"]) == list(splits) == ["zep", "evermemos"]
    for _, row in numbers.frame.iterrows():
        cells = splits[row["System"]].overall.cells
        placed = sum(cells[f][v] for f in cells for v in (True, False))
        assert row["questions placed"] == str(placed)
        wrong_all = cells["all"][False]
        assert row["answering failure"] == f"{wrong_all} ({wrong_all / placed:.0%})"
        assert row["retrieval failure"].startswith(f"{cells['none'][False]} (")
    zep = shares.frame[(shares.frame["System"] == "zep") & (shares.frame["over"] == "all headline questions")]
    assert zep.iloc[0]["wrong: retrieval failures"] == splits["zep"].overall.of_wrong("none").text()
    assert note.text == "Not split (their files carry no retrieved memories): mem0."
    assert [key for key, _, _ in FAILURE_PARTS] == ["correct", "answering", "partial", "retrieval"]


def test_the_answer_key_section_sets_both_keys_side_by_side(run):
    """Under the errata: the table's columns under the original and the corrected key, every answer-key line, the
    judgments changed, and the ceiling per category with the headline's total."""
    _, evaluation, statistics = run
    intro, side, key, corrections, ceiling = answers.answer_key(evaluation, statistics)
    assert intro.text.startswith("`errata-sample.json` corrects the answer key.")
    assert list(side.frame.columns) == ["System", "Judge", "F1", "EM", "BLEU-1", "answer_in_context@5", "R@5"]
    original = original_statistics(evaluation, statistics)
    before, after = original.intervals["zep"]["F1"].mean, statistics.intervals["zep"]["F1"].mean
    assert side.frame.iloc[1]["F1"].startswith(f"{before:.3f} → {after:.3f} (")
    patch = evaluation.collection.judgment_patch
    assert len(key.frame) == len(patch.answer_key)
    evidence = key.frame[key.frame["kind"] == "evidence"].iloc[0]
    assert evidence["original"] == "conv-1/D1:6, conv-1/D2:3"
    assert isinstance(corrections, Folded)  # the evidence lines of the table above, folded rather than repeated
    assert corrections.summary.startswith("Corrections in errata-sample.json (sha256 ")
    assert corrections.summary.endswith(f": the {len(patch.corrections)} judgments changed")
    assert corrections.text.count("\n- line ") == len(patch.corrections)
    expected = answer_key_ceiling(patch, evaluation.collection)
    assert len(ceiling.frame) == len(expected) + 1
    right, total = expected["1 multi-hop"]
    assert ceiling.frame.iloc[0].tolist() == ["1 multi-hop", str(total), str(right), f"{right / total:.3f}", "1"]
    kept = [v for g, v in expected.items() if g != "5 adversarial"]
    assert ceiling.frame.iloc[-1]["questions"] == str(sum(t for _, t in kept))


def test_without_a_patch_the_answer_key_is_one_line():
    """No qrels_patch: one line says every number is under the collection's own key."""
    setup = _setup(answers=f"mem0={MEM0}", retrievers="", qrels_patch="")
    evaluation = setup.evaluate()
    [line] = answers.answer_key(evaluation, setup.statistics(evaluation))
    assert line.text == 'No answer-key patch (`qrels_patch = ""`): every number is under the collection\'s own key.'


def test_judges_and_seeds_are_the_analysis_rows(run):
    """The judges' table is judge_rows with each system's format; the seeds' table is seed_rows (mem0's two runs)."""
    _, evaluation, statistics = run
    table, meanings = answers.judges(evaluation, statistics)
    rows = judge_rows(evaluation)
    assert list(table.frame["System"]) == [r.system for r in rows]
    assert table.frame.iloc[1]["format"] == "mem0, 2 seeds"
    evermemos = next(r for r in rows if r.system == "evermemos")
    assert table.frame.iloc[2]["judges agree"] == f"{evermemos.agreement:.3f} of {evermemos.agreement_n}"
    assert "- zep: `grade`: true correct, false wrong" in meanings.text
    seeds = answers.seeds(evaluation, statistics)
    expected = seed_rows(evaluation, statistics)
    assert isinstance(seeds, Table) and len(seeds.frame) == len(expected) > 0
    first = expected[0]
    assert seeds.frame.iloc[0].tolist()[:4] == [
        "mem0",
        first.measure,
        ", ".join(f"{s:.3f}" for s in first.seeds),
        f"{first.sd:.3f}",
    ]
    assert seeds.frame.iloc[0]["the gap"] == first.verdict


def test_a_system_of_one_file_has_no_seed_table():
    setup = _setup(answers=f"zep={ZEP};evermemos={EVERMEMOS}", retrievers="", qrels_patch="")
    evaluation = setup.evaluate()
    shown = answers.seeds(evaluation, setup.statistics(evaluation))
    assert isinstance(shown, Markdown) and shown.text.startswith("No system was given several answer files (seeds)")


def test_caveats_are_computed_from_the_run(run):
    """The caveats count the questions, name a system answering fewer, the questions left out of retrieval, the
    judges, the even splits, each system's attribution coverage."""
    _, evaluation, statistics = run
    text = answers.caveats(evaluation, statistics).text
    n = statistics.queries
    assert f"- **{n} headline questions:** each weighs 1/{n} = {1 / n:.3f} in a mean" in text
    cell = statistics.intervals["evermemos"]["Judge"]
    assert f"- **evermemos answers {cell.n} of the {n} headline questions:**" in text
    assert f"- **{len(evaluation.collection.left_out_queries)} questions without usable evidence**" in text
    assert "(zep: grade; mem0: llm_score; evermemos: judgment_1, judgment_2, judgment_3)" in text
    ties = sum(q.metrics.get("Judge") == 0.5 for q in evaluation.result("mem0").headline)
    assert f"on some questions (mem0 {ties})" in text
    report = next(a for a in evaluation.answers if a.name == "zep").attributed.report
    assert (
        f"zep's retrieved memories count through attribution (auto): {report.attributed} of {report.returned}" in text
    )


def test_claims_is_one_line_without_a_file(run):
    _, evaluation, statistics = run
    assert answers.claims(evaluation, statistics).text.startswith('No claims file (`claims = ""`)')


def test_the_command_writes_the_notebooks_artifact(run, tmp_path, monkeypatch):
    """answers.command is the agentmemory eval line (run from the repository root) whose artifact is the
    notebook's, byte for byte."""
    setup, evaluation, statistics = run
    command = answers.command(setup, evaluation)
    assert command == (
        f"agentmemory eval --collection {SAMPLE} --repair --seed 7 --k 5 --retrievers bm25 --answers zep={ZEP} "
        f"--answers mem0={MEM0},{MEM0_RUN2} --answers evermemos={EVERMEMOS} --baseline zep "
        f"--table-metrics Judge,F1,EM,BLEU-1,answer_in_context@5,R@5 --qrels-patch {ERRATA} --out eval-results.json"
    )
    monkeypatch.chdir(REPO_ROOT)
    out = tmp_path / "cli.json"
    args = command.split()[2:-2] + ["--out", str(out), "--no-progress"]
    with contextlib.redirect_stdout(io.StringIO()):
        assert cli_main(["eval", *args]) == 0
    assert out.read_text(encoding="utf-8") == dumps_artifact(evaluation, statistics)


def test_judge_agreement_per_category_and_the_live_calls_sections(run):
    """The agreement table is the analysis rows (evermemos's three judges, per category); without a live call
    the live section is one line."""
    from agentmemory.analysis.answers_view import AGREEMENT_HEADER, agreement_rows

    _, evaluation, _ = run
    table = answers.agreement(evaluation)
    assert isinstance(table, Table) and list(table.frame.columns) == list(AGREEMENT_HEADER)
    assert table.frame.values.tolist() == agreement_rows(evaluation) != []
    assert set(table.frame["system"]) == {"evermemos"}
    assert "Cohen's kappa = (p_o − p_e) / (1 − p_e)" in table.caption
    live = answers.live_calls(evaluation)
    assert isinstance(live, Markdown) and live.text.startswith("No answer or verdict was made live here")


def test_without_two_judges_the_agreement_section_is_one_line():
    setup = _setup(answers=f"mem0={MEM0}", retrievers="", qrels_patch="")
    shown = answers.agreement(setup.evaluate())
    assert isinstance(shown, Markdown) and shown.text.startswith("No system has the verdicts of two judges")
