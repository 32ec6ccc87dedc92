"""The comparison table as LaTeX: escaped, compact, booktabs, a label, the legend as a footnote; compiled by pdflatex.

The compile tests run pdflatex on the emitted table inside a two-column
article and read its log: no error, no overfull box wider than 10 pt.  They
skip only where pdflatex is absent (``.ci/run`` installs
``texlive-latex-recommended`` when ``kpsewhich booktabs.sty`` finds nothing).
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from agentmemory import evaluate
from agentmemory.analysis.comparison_table import comparison_table
from agentmemory.analysis.latex_table import latex_escape, latex_label, latex_table, short_labels, table_label
from agentmemory.analysis.statistics import evaluation_statistics
from agentmemory.cli.app import main
from agentmemory.datasets import load
from agentmemory.datasets.synthetic import synthetic_collection
from agentmemory.errors import ParameterError
from agentmemory.evaluation.options import EvalOptions

PDFLATEX = shutil.which("pdflatex")
SAMPLE = REPO_ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json"
CLAIMS = REPO_ROOT / "fixtures" / "claims" / "claims.toml"
SAMPLE_LABEL = "tab:agentmemory-locomo-sample-p5"  # the collection's release and the table's first measure
OVERFULL_LIMIT = 10.0  # pt

needs_pdflatex = pytest.mark.skipif(
    PDFLATEX is None, reason="pdflatex is not installed (apt-get install texlive-latex-recommended; .ci/run does)"
)

DOCUMENT = r"""\documentclass[twocolumn]{article}
\usepackage{booktabs}
\usepackage{amssymb}
\begin{document}
Results are in Table~\ref{%(label)s}.\footnote{A footnote of the paper before the table's.}
\input{%(table)s}
\end{document}
"""


@pytest.fixture(scope="module")
def large():
    """60 synthetic queries, BM25 against the tag scorer: significant differences, so markers appear."""
    collection = synthetic_collection(seed=3, n_entries=300, n_queries=60, mismatch_rate=0.3)
    evaluation = evaluate(collection, "bm25,tags", k=5, seed=7)
    return comparison_table(evaluation, evaluation_statistics(evaluation, seed=7, n_resamples=2000))


def compile_table(tex: Path, label: str) -> tuple[str, list[float]]:
    """pdflatex (twice, for the reference) on a two-column article inputting ``tex``: its log and each overfull
    box's excess in pt.  Fails on any error, naming the package to install when booktabs is missing."""
    document = tex.with_name("paper.tex")
    document.write_text(DOCUMENT % {"label": label, "table": tex.name}, encoding="utf-8")
    for _ in range(2):
        done = subprocess.run(
            [PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", document.name],
            cwd=tex.parent,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        log = document.with_suffix(".log").read_text(encoding="latin-1")
        assert "booktabs.sty' not found" not in log, (
            "pdflatex has no booktabs: apt-get install texlive-latex-recommended"
        )
        errors = [line for line in log.splitlines() if line.startswith("!")]
        assert done.returncode == 0 and not errors, "\n".join(errors) or done.stdout[-2000:]
    overfull = [float(x) for x in re.findall(r"^Overfull \\hbox \(([\d.]+)pt too wide\)", log, re.M)]
    assert "undefined references" not in log, "the \\label did not resolve"
    return log, overfull


@needs_pdflatex
def test_default_table_compiles_and_fits_a_column(tmp_path: Path, capsys) -> None:
    """`agentmemory eval --table-out x.tex` on the LoCoMo sample with five systems (default measures): pdflatex
    compiles it as emitted, in one column of a two-column article, with no overfull box over 10 pt."""
    tex = tmp_path / "results.tex"
    argv = ["eval", "--collection", str(SAMPLE), "--retrievers", "bm25,tags,hybrid,recency,bm25[k1=0.9,b=0.4]"]
    assert main([*argv, "--table-out", str(tex), "--no-progress"]) == 0
    capsys.readouterr()
    text = tex.read_text(encoding="utf-8")
    assert "\\begin{table}[tbp]" in text and f"\\label{{{SAMPLE_LABEL}}}" in text
    _, overfull = compile_table(tex, SAMPLE_LABEL)
    assert max(overfull, default=0.0) <= OVERFULL_LIMIT, overfull


@needs_pdflatex
def test_markers_and_hostile_labels_compile(large, tmp_path: Path) -> None:
    """Markers (amssymb's triangles) and labels holding every character LaTeX treats specially, accents and
    characters pdflatex cannot set compile without an error."""
    hostile = (
        ("bm25", "a_b & c 50% $x$ #1 {y} ~z ^w \\ <> |", "retriever"),
        ("tags", 'Système "q" ł – α ≥ 漢 ▲', "retriever"),
    )
    table = dataclasses.replace(large, systems=hostile)
    tex = tmp_path / "hostile.tex"
    tex.write_text(latex_table(table, label="tab:hostile"), encoding="utf-8")
    assert "$^{\\blacktriangledown}$" in tex.read_text(encoding="utf-8")
    _, overfull = compile_table(tex, "tab:hostile")
    assert max(overfull, default=0.0) <= OVERFULL_LIMIT, overfull


@needs_pdflatex
def test_a_wider_table_spans_both_columns_and_fits(tmp_path: Path, capsys) -> None:
    """Nine measures (--table-metrics) do not fit a column: the float is table*, and it fits both."""
    tex = tmp_path / "wide.tex"
    measures = "P@5,R@5,RR,nDCG@5,AP@5,P@10,R@10,nDCG@10,AP@10"
    argv = ["eval", "--collection", str(SAMPLE), "--table-metrics", measures, "--table-out", str(tex)]
    assert main([*argv, "--no-progress"]) == 0
    capsys.readouterr()
    assert "\\begin{table*}[tbp]" in tex.read_text(encoding="utf-8")
    _, overfull = compile_table(tex, SAMPLE_LABEL)
    assert max(overfull, default=0.0) <= OVERFULL_LIMIT, overfull


def test_structure_booktabs_label_caption_footnote(large) -> None:
    """booktabs rules, one row per system, a label, the caption with a footnote mark whose text is the notation."""
    text = latex_table(large, label="tab:mine")
    lines = text.splitlines()
    for rule in ("\\toprule", "\\midrule", "\\bottomrule"):
        assert lines.count(rule) == 1
    assert "\\hline" not in text
    assert lines[lines.index("\\toprule") + 1] == "System & P@5 & R@5 & RR@5 & nDCG@5 & AP@5 \\\\"
    assert "\\label{tab:mine}" in lines
    assert lines[3].startswith("\\stepcounter{footnote}")
    caption = next(line for line in lines if line.startswith("\\caption["))
    assert caption.endswith(".\\protect\\footnotemark[\\value{footnote}]}")
    sentence = (
        f"Retrieval on {large.collection}: 2 systems over 60 questions at k = 5, against BM25; best per column in bold"
    )
    assert caption == f"\\caption[{sentence}]{{{sentence}.\\protect\\footnotemark[\\value{{footnote}}]}}"
    details = f"{large.caption()}. {large.notation()}"
    assert lines[-1] == f"\\footnotetext[\\value{{footnote}}]{{{latex_escape(details)}}}"
    assert "\\alpha" in lines[-1] and "α" not in text


def test_cells_are_compact_stacks(large) -> None:
    """A cell is the mean (3 decimals, no leading zero, marker as superscript), the interval (2 decimals) and, for
    a system other than the baseline, +a/−b; the baseline's label says so on its own line."""
    text = latex_table(large)
    bm25 = next(line for line in text.splitlines() if line.startswith("\\begin{tabular}[t]{@{}l@{}}BM25"))
    assert bm25.startswith("\\begin{tabular}[t]{@{}l@{}}BM25\\\\{\\scriptsize (baseline)}\\end{tabular} & ")
    cell = large.cells[("tags", "R@5")]
    mean, low, high = (
        f"{v:.{d}f}".removeprefix("0")
        for v, d in ((cell.interval.mean, 3), (cell.interval.low, 2), (cell.interval.high, 2))
    )
    better, worse = large.counts("tags", "R@5")
    expected = (
        f"\\begin{{tabular}}[t]{{@{{}}r@{{}}}}{mean}$^{{\\blacktriangledown}}$\\\\{{\\scriptsize [{low},{high}]}}"
        f"\\\\{{\\scriptsize +{better}/$-${worse}}}\\end{{tabular}}"
    )
    assert expected in text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("trec_eval's 95% & #1", "trec\\_eval's 95\\% \\& \\#1"),
        ("{a} $b$ ~c ^d \\e", "\\{a\\} \\$b\\$ \\textasciitilde{}c \\textasciicircum{}d \\textbackslash{}e"),
        ("a<b>c|d", "a\\textless{}b\\textgreater{}c\\textbar{}d"),
        ("▲/▼ at α = 0.05; +a/−b", "$\\blacktriangle$/$\\blacktriangledown$ at $\\alpha$ = 0.05; +a/$-$b"),
        ('"quoted" “curly” – —', "''quoted'' ``curly'' -- ---"),
        ("Système ł", "Système ł"),  # pdflatex reads UTF-8 accented Latin letters
        ("ﬁ 漢", "fi ?"),  # a compatibility form keeps its letters; a character pdflatex cannot set is '?'
        ("two\nlines", "two lines"),
    ],
)
def test_latex_escape(text: str, expected: str) -> None:
    """Every character LaTeX treats specially is escaped; symbols become their LaTeX forms."""
    assert latex_escape(text) == expected


@pytest.mark.parametrize(
    ("stem", "expected"),
    [("results", "tab:results"), ("locomo table_2", "tab:locomo-table-2"), ("__", "tab:comparison")],
)
def test_latex_label_from_the_file_stem(stem: str, expected: str) -> None:
    """--table-out x.tex labels the table tab:x (letters, digits, '-' and '.' kept)."""
    assert latex_label(stem) == expected


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        (
            ["BM25", "Dense (wordllama)", "Hybrid RRF (BM25 + Dense (wordllama))", "Recency (BM25)"],
            ["BM25", "Dense", "Hybrid RRF", "Recency"],
        ),
        (["BM25", "BM25 (k1=0.9, b=0.4)"], ["BM25", "BM25 (k1=0.9, b=0.4)"]),  # the short form would collide
        (
            ["Hybrid RRF (BM25 + Dense (wordllama))", "Hybrid RRF (BM25 + Dense (hashing))"],
            ["Hybrid RRF (BM25 + Dense (wordllama))", "Hybrid RRF (BM25 + Dense (hashing))"],  # only the full differs
        ),
        (
            ["Hybrid RRF (BM25 + Tag scorer + Recency (BM25); rrf_k=20)", "Hybrid RRF (BM25 + Dense (wordllama))"],
            ["Hybrid RRF (BM25 + Tag scorer + Recency; rrf_k=20)", "Hybrid RRF (BM25 + Dense)"],
        ),
        (["Tag scorer", "mem0"], ["Tag scorer", "mem0"]),
    ],
)
def test_short_labels_drop_parentheses_while_labels_stay_apart(labels: list[str], expected: list[str]) -> None:
    """A label loses all its parentheses, else only the nested ones, else nothing: the shortest form no other
    label of the table also takes."""
    assert short_labels(labels) == expected


@pytest.mark.parametrize(
    ("collection", "measure", "expected"),
    [
        ("agentmemory LoCoMo sample", "R@5", "tab:agentmemory-locomo-sample-r5"),
        ("LoCoMo (original = mem0 copy)", "nDCG@10", "tab:locomo-original-mem0-copy-ndcg10"),
        ("", "R@2048tok", "tab:r2048tok"),
        ("", "", "tab:comparison"),
    ],
)
def test_the_label_is_the_collection_and_the_first_measure(collection: str, measure: str, expected: str) -> None:
    """\\label{tab:<collection>-<measure>}: lower case, letters and digits joined by '-'."""
    assert table_label(collection, measure) == expected


@pytest.fixture(scope="module")
def claimed():
    """BM25, dense, hybrid and recency on the LoCoMo sample with the example claims."""
    evaluation = evaluate(load(SAMPLE), "bm25,dense,hybrid,recency", options=EvalOptions(claims=CLAIMS))
    statistics = evaluation_statistics(evaluation, seed=7, table="R@5,nDCG@5,recall_any@10,sess.recall_any@5")
    return comparison_table(evaluation, statistics)


def _row(text: str, start: str) -> list[str]:
    line = next(line for line in text.splitlines() if line.startswith(start))
    return line.removesuffix(" \\\\[2pt]").split(" & ")


def test_the_best_mean_of_each_column_is_bold_and_labels_are_short(claimed) -> None:
    """The best mean per column (3 decimals, the measure's direction) is bold, ties included; a column where every
    system ties has none bold; labels are short, their full forms in the footnote."""
    text = latex_table(claimed)
    for measure in ("R@5", "nDCG@5"):
        means = {name: round(claimed.cells[(name, measure)].interval.mean, 3) for name, _, _ in claimed.systems}
        assert claimed.best(measure) == tuple(n for n, v in means.items() if v == max(means.values()))
    assert claimed.best("recall_any@10") == ()  # every system at 1.000: nothing stands out
    hybrid = _row(text, "Hybrid RRF & ")
    assert hybrid[1].startswith("\\begin{tabular}[t]{@{}r@{}}\\textbf{.917}") and "textbf" not in hybrid[3]
    assert "textbf" not in "".join(_row(text, "Recency & "))
    assert "Labels in full: Dense: Dense (wordllama); Hybrid RRF: Hybrid RRF (BM25 + Dense (wordllama))" in text


def test_a_label_map_names_the_systems(claimed) -> None:
    """labels maps a system's key or label to its label in the table; the others keep their short form."""
    text = latex_table(claimed, labels={"hybrid": "RRF", "Dense (wordllama)": "Embeddings"})
    assert _row(text, "RRF & ")[0] == "RRF" and _row(text, "Embeddings & ")[0] == "Embeddings"
    assert "Labels in full: Embeddings: Dense (wordllama); RRF: Hybrid RRF (BM25 + Dense (wordllama))" in text
    with pytest.raises(ParameterError, match=r"^--table-label: 'mem0' \(str\) names no system of the table; choose"):
        claimed.relabel({"mem0": "Mem0"}, option="--table-label")


def test_published_rows_sit_below_a_rule_unrounded(claimed) -> None:
    """Each claim whose measure is a column is a row below ours: its figure as stated (.9575, not .958), no
    interval; its source and differences in the footnote; the others are named there."""
    text = latex_table(claimed)
    hebb = _row(text, "\\begin{tabular}[t]{@{}l@{}}hebb-mind")
    assert hebb[0].endswith("{\\scriptsize published, note 1}\\end{tabular}") and hebb[1:] == ["", "", ".9575", ""]
    assert text.splitlines().count("\\midrule") == 2
    footnote = text.splitlines()[-1]
    assert "1. hebb-mind (hebb-mind, prod-mirror + rerank" in footnote
    assert "so not shown: bm25 (recall\\_any@5), dense (recall\\_any@5), bm25 (Success@5)." in footnote


@needs_pdflatex
def test_published_rows_and_short_labels_compile(claimed, tmp_path: Path) -> None:
    """The table with published rows, bold means and the derived label compiles and fits a column."""
    tex = tmp_path / "claims.tex"
    tex.write_text(latex_table(claimed), encoding="utf-8")
    _, overfull = compile_table(tex, "tab:agentmemory-locomo-sample-r5")
    assert max(overfull, default=0.0) <= OVERFULL_LIMIT, overfull
