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
from agentmemory.analysis.latex_table import latex_escape, latex_label, latex_table
from agentmemory.analysis.statistics import evaluation_statistics
from agentmemory.cli.app import main
from agentmemory.datasets.synthetic import synthetic_collection

PDFLATEX = shutil.which("pdflatex")
SAMPLE = REPO_ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json"
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
    assert "\\begin{table}[tbp]" in text and "\\label{tab:results}" in text
    _, overfull = compile_table(tex, "tab:results")
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
    _, overfull = compile_table(tex, "tab:wide")
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
    assert lines[2].startswith("\\stepcounter{footnote}")
    caption = next(line for line in lines if line.startswith("\\caption["))
    assert caption.endswith(".\\protect\\footnotemark[\\value{footnote}]}")
    assert latex_escape(large.caption()) in caption
    assert lines[-1] == f"\\footnotetext[\\value{{footnote}}]{{{latex_escape(large.notation())}}}"
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
