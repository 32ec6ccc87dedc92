"""The HTML reports in a real headless browser (Debian's chromium): the table is visible, every image loads, offline.

No browser driver is needed: a copy of the page gets a small script that,
on ``load``, writes what the browser rendered (visible text, table boxes,
image natural sizes) into a ``<pre>``; ``chromium --dump-dom`` prints the
DOM after that.  Host name resolution is switched off
(``--host-resolver-rules``), so anything fetched from the network would fail:
the page must stand on its own.  A screenshot is saved in the test's
temporary folder.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from conftest import EVAL_SECTIONS as SECTIONS
from conftest import ANSWERS_SECTIONS, REPO_ROOT

REPORTS = REPO_ROOT / "reports"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
TIMEOUT = 120

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (apt-get install chromium; .ci/run installs it)"
)

PROBE = """
<script>
window.addEventListener("load", () => {
  const box = (el) => {
    const r = el.getBoundingClientRect();
    const s = getComputedStyle(el);
    return {top: r.top + window.scrollY, width: r.width, height: r.height,
            visible: s.visibility === "visible" && s.display !== "none" && Number(s.opacity) > 0};
  };
  const report = {
    title: document.title,
    text: document.body.innerText,
    headings: Array.from(document.querySelectorAll("h2")).map((h) => h.innerText.replace(/\\u00b6$/, "").trim()),
    paragraphs: Array.from(document.querySelectorAll("p")).map((p) => Object.assign(box(p), {text: p.innerText})),
    tables: Array.from(document.querySelectorAll("table")).map((t) => Object.assign(box(t), {text: t.innerText})),
    images: Array.from(document.images).map((i) => Object.assign(box(i), {
      complete: i.complete, naturalWidth: i.naturalWidth, naturalHeight: i.naturalHeight, alt: i.alt})),
  };
  const out = document.createElement("pre");
  out.id = "agentmemory-probe";
  out.textContent = JSON.stringify(report);
  document.body.appendChild(out);
});
</script>
"""


def _chromium(profile: Path, *args: str, size: tuple[int, int] = (1280, 1024)) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--hide-scrollbars",
            f"--window-size={size[0]},{size[1]}",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def _render(page: Path, tmp_path: Path, size: tuple[int, int] = (1280, 1024)) -> dict:
    """What the browser rendered of ``page`` (see PROBE) in a window of ``size``, and a screenshot of it in tmp_path."""
    html = page.read_text(encoding="utf-8")
    end = html.rindex("</body>")
    probed = tmp_path / page.name
    probed.write_text(html[:end] + PROBE + html[end:], encoding="utf-8")
    done = _chromium(tmp_path / "profile", "--virtual-time-budget=10000", "--dump-dom", probed.as_uri(), size=size)
    assert done.returncode == 0, done.stderr[-2000:]
    probe = BeautifulSoup(done.stdout, "html.parser").find("pre", id="agentmemory-probe")
    assert probe is not None, "the page's load event never fired: " + done.stderr[-2000:]
    shot = tmp_path / f"{page.stem}.png"
    done = _chromium(tmp_path / "profile-shot", f"--screenshot={shot}", page.as_uri(), size=size)
    assert done.returncode == 0 and shot.is_file(), done.stderr[-2000:]
    return json.loads(probe.get_text())


def _screenshot_is_not_blank(shot: Path, size: tuple[int, int] = (1280, 1024)) -> None:
    import matplotlib.image

    pixels = matplotlib.image.imread(shot)
    assert pixels.shape[:2] == (size[1], size[0])
    assert pixels[..., :3].std() > 0.05


def test_eval_report_shows_the_table_and_every_image(tmp_path):
    """Title, the comparison table with intervals and its notation line in the first screen, the seed's table,
    section headings, three loaded images with visible captions, the explanation."""
    seen = _render(REPORTS / "eval.html", tmp_path)
    assert seen["title"] == "agentmemory evaluation report"
    assert seen["headings"] == SECTIONS

    card = next(t for t in seen["tables"] if t["text"].startswith("Measure\tFamily\tBetter\tDefinition"))
    assert "agentmemory assistant-notes fixture, entries, trec_eval P/R/RR/nDCG/AP, 5 of 5 questions" in seen["text"]
    compared = next(t for t in seen["tables"] if "(baseline)" in t["text"])
    assert compared["visible"] and compared["top"] < 1024, "the comparison table is on the first screen"
    assert compared["top"] < card["top"], "the full definitions card comes further down"
    rows = compared["text"].splitlines()
    assert rows[0].startswith(
        "agentmemory assistant-notes fixture, entries, trec_eval P/R/RR/nDCG/AP, 5 of 5 questions. Systems against "
        "the baseline BM25, trec_eval's definitions: headline means over 5"
    )
    header = rows.index("System\tP@5\tR@5\tRR@5\tnDCG@5\tAP@5")
    assert rows[header + 1].startswith("BM25 (baseline)\t0.280 [0.200, 0.360]\t0.900 [0.700, 1.000]\t")
    assert rows[header + 2].startswith("Tag scorer\t0.320 [0.240, 0.400] +1/−0\t")
    assert "▲/▼: significantly higher/lower than BM25 at α = 0.05" in seen["text"]
    assert "With 5 queries the smallest attainable p-value is 0.0625, so no marker can appear" in seen["text"]

    # the seed's metric table is folded (the comparison table shows these means): its rows are not rendered
    assert "Retriever\tmean_recall@k" not in seen["text"]
    assert "k = 5, seed = 7; means over 5 headline queries, 16 entries." in seen["text"]  # its summary stays
    page = BeautifulSoup((REPORTS / "eval.html").read_text(encoding="utf-8"), "html.parser")
    folded = next(d for d in page.find_all("details") if d.summary.get_text().startswith("k = 5, seed = 7;"))
    rows = ["\t".join(cell.get_text() for cell in row.find_all(["th", "td"])) for row in folded.find_all("tr")]
    assert "Retriever\tmean_recall@k\tmean_precision@k\tMRR\tRR@5\tnDCG@5\tAP@5" in rows
    assert "BM25\t0.90\t0.28\t1.00\t1.0000\t0.8905\t0.8333" in rows
    assert "Tag scorer\t1.00\t0.32\t1.00\t1.0000\t1.0000\t1.0000" in rows

    images = seen["images"]
    # the headline means, two plots and the paired heat map, numbered in order; Figure 4 (every first relevant hit
    # at rank 1 here) is a sentence, not bars all at 1
    assert len(images) == 4
    assert [image["alt"].split(":")[0] for image in images] == ["Figure 1", "Figure 2", "Figure 3", "Figure 5"]
    assert "Figure 4: rank of the first relevant hit per query, by system: not drawn, since each of the 2" in seen["text"]
    for image in images:
        assert image["complete"] and image["naturalWidth"] > 0 and image["naturalHeight"] > 0, image
        assert image["visible"]
        assert image["alt"] in seen["text"], "each figure's caption is visible text, not only alternative text"
    assert images[0]["top"] < compared["top"] < min(i["top"] for i in images[1:])

    assert "missed m10" in seen["text"] and "every reciprocal rank is 1" in seen["text"]
    assert "params.eval_setup" not in seen["text"], "code cells must be hidden"
    _screenshot_is_not_blank(tmp_path / "eval.png")


def test_explore_report_renders(tmp_path):
    """The exploration page shows its statistics, the side-by-side hits and the term table."""
    seen = _render(REPORTS / "explore.html", tmp_path)
    assert seen["title"] == "agentmemory: exploring a collection"
    texts = [t["text"] for t in seen["tables"] if t["visible"] and t["height"] > 0]
    assert any(t.startswith("Collection assistant-notes") for t in texts)
    assert any("rank\tBM25\tTag scorer" in t for t in texts)
    assert any("term\tin query\tin entry" in t for t in texts)
    [scores] = seen["images"]
    assert scores["alt"].startswith("Figure 1: each retriever's top 5 for the query, by score")
    _screenshot_is_not_blank(tmp_path / "explore.png")


def test_collection_report_shows_its_tables_and_image(tmp_path):
    """The LoCoMo sample's report: headline table with intervals, skipped queries, group tables, the rank figure."""
    seen = _render(REPORTS / "collection.html", tmp_path)
    assert seen["title"] == "agentmemory collection report"
    assert seen["headings"][:3] == ["1. What was evaluated", "2. Per group", "3. Paired comparisons"]
    visible = [t for t in seen["tables"] if t["visible"] and t["width"] > 0 and t["height"] > 0]
    texts = [t["text"] for t in visible]
    card = next(i for i, t in enumerate(texts) if t.startswith("Measure\tFamily\tBetter\tDefinition\nP@5\ttrec_eval\t"))
    compared = next(t for t in texts if "(baseline)" in t)
    assert texts.index(compared) < card, "the full card comes after the comparison table"
    assert "System\tP@5\tR@5\tRR@5\tnDCG@5\tAP@5\nBM25 (baseline)\t0.200 [0.200, 0.200] (all equal)" in compared
    assert "Dense (wordllama)" in compared and "▲/▼: significantly higher/lower than BM25" in seen["text"]
    assert any("evidence 'D1:6; D2:3' holds several ids in one string\t1\tconv-1/q2" in t for t in texts)
    assert "Shown separately, left out of the headline means: 5 adversarial" in seen["text"]  # folded, summary shown
    means, groups, heatmap, ranks = seen["images"]
    assert means["alt"].startswith("Figure 1: R@5 of each system over the headline questions")
    assert groups["alt"].startswith("Figure 2: R@5 per category, each system side by side, with 95% intervals")
    assert heatmap["alt"].startswith("Figure 3: mean paired difference of each pair of systems on each measure")
    assert ranks["alt"].startswith("Figure 4: headline queries by rank of the first relevant hit")
    for image in (means, groups, heatmap, ranks):
        assert image["complete"] and image["naturalWidth"] > 0 and image["naturalHeight"] > 0, image
        assert image["visible"] and image["alt"] in seen["text"]
    assert "Numbers behind Figure 3: paired differences over 6 headline" in seen["text"]  # folded, summary shown
    assert "collection_setup" not in seen["text"], "code cells must be hidden"
    _screenshot_is_not_blank(tmp_path / "collection.png")


def test_a_report_of_ones_own_opens_in_the_browser(user_report, tmp_path):
    """What `agentmemory report notebooks/collection.ipynb --out out/report -p collection <LoCoMo sample>` writes
    opens offline: the comparison table in the first screen, every figure loaded with its caption, no code."""
    done, out = user_report
    assert done.returncode == 0, done.stderr
    seen = _render(out / "collection.html", tmp_path)
    assert seen["title"] == "agentmemory collection report"
    assert seen["headings"][:2] == ["1. What was evaluated", "2. Per group"]
    compared = next(t for t in seen["tables"] if "(baseline)" in t["text"])
    assert compared["visible"] and compared["top"] < 1024
    caption = compared["text"].splitlines()[0]
    assert caption.startswith("agentmemory LoCoMo sample, turns, trec_eval P/R/RR/nDCG/AP, 6 of 17 questions. ")
    assert ". Systems against the baseline BM25" in caption
    assert seen["images"], "the report has figures"
    for image in seen["images"]:
        assert image["complete"] and image["naturalWidth"] > 0 and image["visible"], image
        assert image["alt"].startswith("Figure ") and image["alt"] in seen["text"]
    assert "collection_setup" not in seen["text"], "code cells must be hidden"
    _screenshot_is_not_blank(tmp_path / "collection.png")


def test_longmemeval_report_shows_both_families_and_the_loaders_notes(tmp_path):
    """The LongMemEval sample's report: the caption names both families, the official measures are columns, the
    overview names the granularity, and the skipped questions and the loader's notes are visible tables."""
    seen = _render(REPORTS / "collection-longmemeval.html", tmp_path)
    assert seen["headings"][:2] == ["1. What was evaluated", "2. Per group"]
    visible = [t["text"] for t in seen["tables"] if t["visible"] and t["width"] > 0 and t["height"] > 0]
    compared = next(t for t in visible if "(baseline)" in t)
    caption, first_row = compared.splitlines()[:2]
    assert caption.startswith("agentmemory LongMemEval sample, turns, trec_eval P/R/RR/nDCG/AP + LongMemEval ")
    assert ". Systems against the baseline BM25" in caption
    header = first_row.split("\t")
    assert header[:2] == ["System", "P@5"] and "recall_any@5" in header and "sess.ndcg_any@5" in header
    assert (
        "trec_eval's definitions (P@5" in seen["text"]
        and "LongMemEval official definitions (recall_any@5" in seen["text"]
    )
    assert "granularity = turn, indexed_turns = user" in seen["text"]
    assert any(
        t.startswith("Skipped by the loader (8), left out of every number\nreason\tquestions\tqueries\nno user turn")
        for t in visible
    )
    assert "Scopes (LongMemEval: one per question, its haystack)" in seen["text"]
    assert "LoCoMo:" not in seen["text"] and "per category" not in seen["text"], "LongMemEval's words only"
    assert any("gpt4_93c1a7d5\tanswer session 'answer_93c1a7d5_3' is not judged" in t for t in visible)
    _screenshot_is_not_blank(tmp_path / "collection-longmemeval.png")


def test_sweep_report_shows_its_tables_and_images(tmp_path):
    """The sweep report: its three figures loaded, the quantile table and the heat map's numbers visible, the
    statement and the best setting in the text."""
    seen = _render(REPORTS / "sweep.html", tmp_path)
    assert seen["title"] == "agentmemory sweeps: k, seeds and BM25's parameters"
    images = seen["images"]
    assert len(images) == 3
    assert images[2]["alt"].startswith("Figure 3: BM25's headline mean nDCG@5 over k1 and b (20 settings, 50 queries)")
    for image in images:
        assert image["complete"] and image["naturalWidth"] > 0 and image["naturalHeight"] > 0, image
    texts = [t["text"] for t in seen["tables"] if t["visible"] and t["height"] > 0]
    assert any(t.startswith("Each retriever's mean across 20 seeds per collection shape") for t in texts)
    assert "How much a 16-entry, 5-query evaluation moves across seeds." in seen["text"]
    assert any(t.startswith("Numbers behind Figure 3: BM25: nDCG@5, headline mean over 50 queries") for t in texts)
    assert "Best setting on nDCG@5 (highest headline mean of 20 settings)" in seen["text"]
    _screenshot_is_not_blank(tmp_path / "sweep.png")


def test_answers_report_opens_with_the_verdict_the_figure_and_the_table(tmp_path):
    """reports/answers.html: the verdict, Figure 1 (Judge and F1 with intervals) and the comparison table all on the
    first screen (1280 x 1024), in that order; every figure loads with its caption visible; code hidden."""
    seen = _render(REPORTS / "answers.html", tmp_path)
    assert seen["title"] == "agentmemory answers report"
    assert seen["headings"] == ANSWERS_SECTIONS
    screen = 1024
    verdict = next(p for p in seen["paragraphs"] if p["text"].startswith("Verdict. "))
    assert verdict["visible"] and verdict["top"] + verdict["height"] < screen
    assert "compared on the 15 headline questions of the agentmemory LoCoMo sample" in verdict["text"]
    assert "Against the baseline zep on Judge" in verdict["text"]
    first = seen["images"][0]
    assert first["alt"].startswith("Figure 1: Judge and F1 of each system over the headline questions")
    assert first["complete"] and first["visible"] and first["top"] + first["height"] < screen
    table = next(t for t in seen["tables"] if "(baseline)" in t["text"])
    assert table["visible"] and table["top"] < screen
    assert table["text"].splitlines()[1] == "System\tJudge\tF1\tEM\tBLEU-1\tanswer_in_context@5\tR@5"
    assert table["text"].splitlines()[2].startswith("zep (baseline)\t")
    assert verdict["top"] < first["top"] < table["top"]
    images = seen["images"]
    assert [image["alt"].split(":")[0] for image in images] == ["Figure 1", "Figure 2", "Figure 3", "Figure 4"]
    for image in images:
        assert image["complete"] and image["naturalWidth"] > 0 and image["visible"], image
        assert image["alt"] in seen["text"], "each figure's caption is visible text"
    assert "answers_setup" not in seen["text"], "code cells must be hidden"
    _screenshot_is_not_blank(tmp_path / "answers.png")


FIRST_SCREEN = (1400, 1000)
"""The first screen of the issue: 1,400 px wide, 1,000 px high."""
COMMITTED = sorted(page.stem for page in REPORTS.glob("*.html"))


@pytest.mark.parametrize("name", COMMITTED)
def test_first_screen_holds_the_verdict_the_figure_and_the_table(name, tmp_path):
    """Every committed report, at 1,400 px wide: the verdict, Figure 1 and the table of its numbers all begin within
    the first 1,000 px, in that order (the figure whole, the table's caption, header and first row)."""
    width, screen = FIRST_SCREEN
    seen = _render(REPORTS / f"{name}.html", tmp_path, size=FIRST_SCREEN)
    verdict = next(p for p in seen["paragraphs"] if p["text"].startswith("Verdict. "))
    assert verdict["visible"] and verdict["top"] + verdict["height"] <= screen, verdict
    figure = seen["images"][0]
    assert figure["alt"].startswith("Figure 1: ")
    assert figure["complete"] and figure["visible"] and figure["top"] + figure["height"] <= screen, figure
    table = next(t for t in seen["tables"] if t["top"] > figure["top"] and t["visible"])
    rows = table["text"].splitlines()
    assert len(rows) >= 3 and table["top"] + 120 <= screen, (table["top"], rows[:3])
    assert verdict["top"] < figure["top"] < table["top"]
    _screenshot_is_not_blank(tmp_path / f"{name}.png", FIRST_SCREEN)


A4 = "<style>@page { size: A4; }</style>"
PAGE_BUDGET = 10


def _pages(page: Path, tmp_path: Path) -> int:
    """How many A4 pages chromium's print to PDF makes of ``page`` (a copy asking for A4 paper)."""
    html = page.read_text(encoding="utf-8")
    copy = tmp_path / f"a4-{page.name}"
    copy.write_text(html.replace("</head>", f"{A4}</head>", 1), encoding="utf-8")
    pdf = tmp_path / f"{page.stem}.pdf"
    done = _chromium(tmp_path / "profile-pdf", f"--print-to-pdf={pdf}", "--no-pdf-header-footer", copy.as_uri())
    assert done.returncode == 0 and pdf.is_file(), done.stderr[-2000:]
    return len(re.findall(rb"/Type\s*/Page(?![s\w])", pdf.read_bytes()))


@pytest.mark.parametrize("name", COMMITTED)
def test_every_committed_report_prints_to_at_most_ten_pages(name, tmp_path):
    """The reports on the samples print to at most 10 A4 pages: long lists are counted, folded or left out."""
    assert 1 <= _pages(REPORTS / f"{name}.html", tmp_path) <= PAGE_BUDGET


@pytest.mark.parametrize("retrievers", [None, "tags,bm25"])
def test_the_readmes_locomo_command_prints_to_at_most_ten_pages_whatever_the_ties(retrievers, tmp_path):
    """`agentmemory report collection --out DIR -p collection <LoCoMo sample>`, with the default retrievers and with
    the tag scorer, whose scores tie on nearly every query, first: at most 10 A4 pages; the tie tables are folded."""
    script = Path(sys.executable).parent / "agentmemory"
    extra = [] if retrievers is None else ["-p", "retrievers", retrievers]
    argv = [str(script), "report", "collection", "--out", str(tmp_path / "out"), "-p", "collection"]
    done = subprocess.run(
        [*argv, str(REPO_ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json"), *extra],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    page = tmp_path / "out" / "collection.html"
    html = page.read_text(encoding="utf-8")
    if retrievers is not None:
        folded = re.findall(r"<details><summary>Tag scorer: the \d+ quer(?:y|ies) whose tied scores straddle", html)
        assert len(folded) == 1, "the tag scorer's tie table is folded"
    assert _pages(page, tmp_path) <= PAGE_BUDGET
