"""The documentation site: it builds with ``mkdocs build --strict``, every internal link resolves, nothing is
fetched from another host, the generated reference pages hold what the code declares, and a headless browser
shows the navigation and the search box.

The site is built once per module into a temporary folder (never into ``site/``).  The browser checks use
Debian's chromium as ``tests/notebooks/test_browser.py`` does, on the site served from 127.0.0.1, with the resolution
of every other host name switched off, and read ``performance.getEntriesByType("resource")`` after load:
every resource the page fetched must come from the site.
"""

from __future__ import annotations

import dataclasses
import functools
import http.server
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from urllib.parse import unquote, urlsplit

import pytest
from bs4 import BeautifulSoup
from conftest import REPO_ROOT

from agentmemory.datasets import FORMATS, load
from agentmemory.experiment.grid import GRID_TABLES
from agentmemory.metrics import REGISTRY
from agentmemory.retrievers import CAPABILITY_TABLE
from agentmemory.systems import SYSTEM_CAPABILITIES, Memory, Turn
from agentmemory.systems.attribution import ATTRIBUTION_METHODS

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
BUILD_TIMEOUT = 300
BROWSER_TIMEOUT = 120

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("mkdocstrings") is None,
    reason="mkdocs is not installed (the docs extra: pip install -c constraints.txt -e '.[docs]', or make docs)",
)
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (apt-get install chromium; .ci/run installs it)"
)


@pytest.fixture(scope="module")
def hooks() -> ModuleType:
    """docs/hooks.py, whose entries (the parser builder, the grid's key declarations) the checks below read,
    so that repointing an entry there repoints these tests too."""
    spec = importlib.util.spec_from_file_location("agentmemory_docs_hooks", REPO_ROOT / "docs" / "hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site built from this checkout's mkdocs.yml, strictly, into a temporary folder."""
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", "mkdocs.yml", "--site-dir", str(out)],
        cwd=REPO_ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "WARNING" not in done.stderr, done.stderr[-3000:]
    return out


def _pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


def _soup(page: Path) -> BeautifulSoup:
    return BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")


def _text(site: Path, name: str) -> str:
    return " ".join(_soup(site / name).find("article").get_text(" ").split())


NAV_PAGES = [
    "index.html",
    "getting-started.html",
    "own-system.html",
    "protocols/retriever.html",
    "protocols/memory-system.html",
    "protocols/measure.html",
    "protocols/format.html",
    "collections.html",
    "fixtures.html",
    "measures.html",
    "cli.html",
    "grids.html",
    "semantics.html",
    "statistics.html",
    "store.html",
    "scale.html",
    "api.html",
    "reports.html",
    "architecture.html",
    "development.html",
    "changelog.html",
]


def test_every_nav_page_is_built(site):
    """Each page of the navigation is an HTML file of the site, with an article of its own."""
    for name in NAV_PAGES:
        page = site / name
        assert page.is_file(), name
        assert _soup(page).find("article").get_text(strip=True), name


def test_no_internal_link_is_broken(site):
    """Every relative href and src of every built page names a file of the site, and its #anchor an id there."""
    ids: dict[Path, set[str]] = {}

    def anchors(page: Path) -> set[str]:
        if page not in ids:
            ids[page] = {tag["id"] for tag in _soup(page).find_all(id=True)}
        return ids[page]

    broken = []
    checked = 0
    for page in _pages(site):
        for tag in _soup(page).find_all(["a", "link", "script", "img", "source"]):
            target = tag.get("href") or tag.get("src")
            if not target or re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
                continue  # another scheme (https:, mailto:, data:) is no internal link
            parts = urlsplit(target)
            if not parts.path:
                file = page
            elif parts.path.startswith("/"):  # 404.html's links are from the site's root, where a server puts it
                file = site / unquote(parts.path).lstrip("/")
            else:
                file = (page.parent / unquote(parts.path)).resolve()
            if file.is_dir():
                file = file / "index.html"
            checked += 1
            if not file.is_file():
                broken.append(f"{page.relative_to(site)}: {target} (no such file)")
            elif parts.fragment and file.suffix == ".html" and unquote(parts.fragment) not in anchors(file):
                broken.append(f"{page.relative_to(site)}: {target} (no such anchor)")
    assert checked > 500, f"only {checked} links checked: the walk found too little"
    assert broken == [], "\n".join(broken)


def test_no_asset_comes_from_another_host(site):
    """No stylesheet, script, font, image or frame of any page, and no url() or @import of any stylesheet,
    names an http(s) address: the site reads from a folder, offline."""
    remote = re.compile(r"^\s*(https?:)?//", re.IGNORECASE)
    found = []
    for page in _pages(site):
        for tag in _soup(page).find_all(["link", "script", "img", "iframe", "source", "video", "audio", "embed"]):
            for attribute in ("href", "src", "srcset"):
                value = tag.get(attribute)
                if value and remote.match(value):
                    found.append(f"{page.relative_to(site)}: <{tag.name} {attribute}={value}>")
    for sheet in site.rglob("*.css"):
        text = sheet.read_text(encoding="utf-8")
        for value in re.findall(r"url\(\s*['\"]?([^'\")]+)", text) + re.findall(r"@import\s+['\"]([^'\"]+)", text):
            if remote.match(value):
                found.append(f"{sheet.relative_to(site)}: {value}")
    assert found == [], "\n".join(found)
    assert not re.search(r"fonts\.(googleapis|gstatic)", (site / "index.html").read_text(encoding="utf-8"))


def test_cli_page_has_every_command_and_option_of_the_parser(site, hooks):
    """Each (sub)command of the parser has a heading, and each of its option strings appears on the page."""
    text = _text(site, "cli.html")
    headings = {
        h.get_text(" ", strip=True).rstrip("¶").strip() for h in _soup(site / "cli.html").find_all(["h2", "h3"])
    }

    def walk(parser, words):
        for action in parser._actions:
            if type(action).__name__ == "_SubParsersAction":
                for name, sub in action.choices.items():
                    yield (*words, name), sub
                    yield from walk(sub, (*words, name))

    top = hooks.top_level_parser()
    commands = [(("agentmemory",), top), *walk(top, ("agentmemory",))]
    assert len(commands) >= 11
    for words, parser in commands:
        assert " ".join(words) in headings, words
        for action in parser._actions:
            if action.help == "show this help message and exit":
                continue  # -h, --help: in every usage line, not repeated in the tables
            for option in action.option_strings:
                assert option in text, (words, option)


def test_measures_page_lists_every_registered_measure(site):
    """The measures table has one row per registered measure and one per budget form (``R@<T>tok`` after ``R``), with
    its description, and the formulas are there."""
    rows = _soup(site / "measures.html").find("article").find("table").find_all("tr")[1:]
    names = [row.find("td").get_text(strip=True) for row in rows]
    definitions = REGISTRY.registered()
    forms = [(n, d.budget_form) for n, d in definitions.items()]
    assert names == [written for n, form in forms for written in ([n, f"{n}@<T>tok"] if form else [n])]
    assert {"R@<T>tok", "nDCG@<T>tok", "P@<T>tok", "Success@<T>tok", "tokens"} <= set(names)
    text = _text(site, "measures.html")
    for definition in definitions.values():
        for d in (definition, definition.budget_form):
            if d is not None:
                assert d.description in text, d.name
    assert "P@k = |{d in ranking[:k] : qrels.get(d, 0) >= 1}| / k" in text
    assert "n_T = max{n >= 0 : l_1 + ... + l_n <= T}" in text


def test_measures_page_contents_list_the_measures_only(site):
    """The measures page's table of contents: its own sections, then one entry per defining module of the
    registry's measures, and none of the modules' members (DEFINITION, BUDGET_DEFINITION, functions)."""
    nav = _soup(site / "measures.html").find("nav", class_="md-nav--secondary")
    entries = [a.get_text(" ", strip=True) for a in nav.find_all("a")]
    measures = entries[entries.index("Every measure") + 1 :]
    assert measures[:4] == ["P", "R", "RR", "nDCG"]
    assert all(name in " ".join(measures) for name in REGISTRY.registered()), measures
    assert not any("DEFINITION" in e or "(" in e for e in entries), entries


def test_a_long_commands_options_are_grouped_by_purpose(site, hooks):
    """eval's options are tables under headings by purpose (OPTION_GROUPS), each option in exactly one; a
    short command's options are one table."""
    soup = _soup(site / "cli.html")
    heading = next(h for h in soup.find_all("h2") if h.get_text(strip=True).rstrip("¶") == "agentmemory eval")
    groups = []
    for tag in heading.find_all_next(["h2", "h3"]):
        if tag.name == "h2":
            break
        groups.append(tag.get_text(strip=True).rstrip("¶"))
    assert groups[:3] == ["The collection", "Retrievers and run files", "Memory systems"]
    assert "Other options" not in groups  # every eval option has a purpose
    top = hooks.top_level_parser()
    subparsers = next(a for a in top._actions if type(a).__name__ == "_SubParsersAction")
    options = [a.option_strings[0] for a in subparsers.choices["eval"]._actions if a.option_strings][1:]
    listed = [
        row.find("td").get_text(" ", strip=True).split()[0].rstrip(",")
        for h in heading.find_all_next("h3")[: len(groups)]
        for row in h.find_next("table").find_all("tr")[1:]
    ]
    assert sorted(listed) == sorted(options)


def test_grid_page_lists_every_key_the_grid_reader_accepts(site, hooks):
    """Every key of every table of a grid file, as GRID_KEYS declares it, is a row of its table, with its help."""
    declarations = hooks.grid_key_declarations()
    names = {title: [key.name for key in keys] for title, keys in declarations.items()}
    assert "relevance" in names["the grid (top level)"]
    assert {"memories", "lenient"} <= set(names["runs = [{ ... }] of a collection"])
    headings = _soup(site / "grids.html").find_all("h3")
    assert len(headings) == len(declarations) == len(GRID_TABLES)
    for heading, (table, keys) in zip(headings, declarations.items()):
        assert heading.get_text(strip=True).rstrip("¶") == table
        rows = heading.find_next("table").find_all("tr")[1:]
        assert [row.find("td").get_text(strip=True) for row in rows] == [key.name for key in keys], table
        for row, key in zip(rows, keys):
            assert " ".join(row.find_all("td")[-1].get_text(" ").split()) == " ".join(key.help.split()), key


def test_memory_system_page_documents_the_protocol_from_the_code(site):
    """The memory-system page lists every field of Turn and Memory, every optional member, every attribution
    method with its formula, coverage and Judged@k, and the shipped MCP profile as it is in the package."""
    text = _text(site, "protocols/memory-system.html")
    for record in (Turn, Memory):
        for field in dataclasses.fields(record):
            assert f"{record.__name__}.{field.name}" in text, field.name
    for name, meaning in SYSTEM_CAPABILITIES.items():
        assert name in text and " ".join(meaning.split()) in text, name
    for method in ATTRIBUTION_METHODS:
        assert method in text, method
    assert "containment(m, t) = W(T(t) ∩ T(m)) / W(T(t))" in text and "w(x) = ln(1 + N / df(x))" in text
    assert "Judged@k = mean over queries of" in text and "coverage = attributed returned memories" in text
    profile = (REPO_ROOT / "agentmemory" / "systems" / "profiles" / "server-memory.toml").read_text(encoding="utf-8")
    blocks = [pre.get_text().strip() for pre in _soup(site / "protocols/memory-system.html").find_all("pre")]
    assert 'tool = "search_nodes"' in profile and profile.strip() in blocks
    assert "factory(scope=..., workdir=Path, **params)" in text


def test_retriever_page_lists_every_declared_capability(site):
    """Each capability of CAPABILITY_TABLE is a row of the retriever page, with its meaning and its fallback."""
    text = _text(site, "protocols/retriever.html")
    for capability in CAPABILITY_TABLE:
        assert capability.name in text, capability.name
        assert " ".join(capability.meaning.split()) in text, capability.name
        assert " ".join(capability.missing.split()) in text, capability.name


def test_collections_page_documents_every_format_and_its_options(site):
    """Each registered format has its section with every declared option, and the loaders' docstrings appear."""
    text = _text(site, "collections.html")
    for name, fmt in FORMATS.registered().items():
        assert f"{name} : {fmt.description}" in text or f"{name}: {fmt.description}" in text, name
        for option in fmt.options:
            assert option.help in text, (name, option.name)
    assert "dia_ids are unique only within one conversation" in text  # the LoCoMo loader's own docstring


@pytest.mark.parametrize(
    ("path", "options", "entry", "query", "scheme"),
    [
        (
            "fixtures/locomo-sample/locomo-sample.json",
            {},
            r"(?P<scope>[^/]+)/D\d+:\d+",
            r"(?P<scope>[^/]+)/q\d+",
            "<sample_id>/<dia_id>",
        ),
        (
            "fixtures/beam-sample",
            {},
            r"(?P<scope>[^/]+)/\d+",
            r"(?P<scope>[^/]+)/[a-z_]+/\d+",
            "<chat>/<ability>/<i>",
        ),
        (
            "fixtures/longmemeval-sample",
            {"granularity": "session"},
            r"(?P<scope>[^/]+)/[^/]+",
            r"(?P<scope>[^/]+)",
            "<question_id>/<session id>",
        ),
        (
            "fixtures/longmemeval-sample",
            {"granularity": "turn"},
            r"(?P<scope>[^/]+)/[^/]+_\d+",
            r"(?P<scope>[^/]+)",
            "<question_id>/<session id>_<n>",
        ),
    ],
)
def test_the_entry_id_schemes_on_the_collections_page_are_the_loaders(site, path, options, entry, query, scheme):
    """The id scheme the collections page states is the one each loader gives, scope prefix included."""
    source = REPO_ROOT / path
    if source.is_dir() and any(source.glob("*.json")):  # a folder holding the file (a BEAM folder is read whole)
        source = next(source.glob("*.json"))
    collection = load(source, **options)
    assert collection.entries and collection.queries
    for item in collection.entries:
        found = re.fullmatch(entry, item.id)
        assert found and found["scope"] == item.scope, item.id
    for item in collection.queries:
        found = re.fullmatch(query, item.id)
        assert found and found["scope"] == item.scope, item.id
    assert scheme in _text(site, "collections.html")


# -- in a browser -------------------------------------------------------------------------------------------
PROBE = """
<script>
window.addEventListener("load", () => setTimeout(() => {
  const search = document.querySelector(".md-search");
  const input = document.querySelector("input.md-search__input[type=text]");
  const box = input ? input.getBoundingClientRect() : {width: 0, height: 0};
  const report = {
    nav: Array.from(document.querySelectorAll("nav.md-nav--primary a.md-nav__link"))
      .map((a) => ({text: a.innerText.trim(), href: a.getAttribute("href")})),
    search: Boolean(search && !search.hidden && input && box.width > 0 && box.height > 0),
    resources: performance.getEntriesByType("resource").map((r) => r.name),
    assets: Array.from(document.querySelectorAll("link[href], script[src], img[src], iframe[src], source[src]"))
      .filter((e) => e.tagName !== "LINK" || !["canonical", "next", "prev"].includes(e.rel))
      .map((e) => e.href || e.src),
    sheets: document.styleSheets.length,
    header: getComputedStyle(document.querySelector("header.md-header")).position,
  };
  const out = document.createElement("pre");
  out.id = "agentmemory-probe";
  out.textContent = JSON.stringify(report);
  document.body.appendChild(out);
}, 500));
</script>
"""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def served(site) -> Iterator[str]:
    """The built site served over HTTP on a free port of 127.0.0.1, as a reader's browser would get it.

    Material's search runs in a web worker, which a browser does not start from a ``file://`` page: over
    HTTP the search box shows, as it does on any host of the site.
    """
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=site))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _render(site: Path, served: str, name: str, tmp_path: Path) -> dict:
    """What chromium rendered of the page ``name`` (see PROBE), loaded from a probed copy beside it, offline."""
    page = site / name
    html = page.read_text(encoding="utf-8")
    end = html.rindex("</body>")
    probed = page.with_name(f"probed-{page.name}")
    probed.write_text(html[:end] + PROBE + html[end:], encoding="utf-8")
    try:
        done = subprocess.run(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                f"--user-data-dir={tmp_path / 'profile'}",
                "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",  # no host but this one resolves
                "--window-size=1280,1024",
                "--virtual-time-budget=10000",
                "--dump-dom",
                served + probed.relative_to(site).as_posix(),
            ],
            capture_output=True,
            text=True,
            timeout=BROWSER_TIMEOUT,
            check=False,
        )
    finally:
        probed.unlink()
    assert done.returncode == 0, done.stderr[-2000:]
    probe = BeautifulSoup(done.stdout, "html.parser").find("pre", id="agentmemory-probe")
    assert probe is not None, "the page's load event never fired: " + done.stderr[-2000:]
    return json.loads(probe.get_text())


@needs_chromium
@pytest.mark.parametrize("name", ["index.html", "protocols/retriever.html", "cli.html"])
def test_browser_shows_navigation_and_search_and_fetches_nothing_remote(site, served, tmp_path, name):
    """In chromium each page has the primary navigation (every nav page reachable), a visible search box and
    the theme's styles, and every asset in the DOM after load (scripts may add some) and every resource the
    page fetched came from the site itself."""
    seen = _render(site, served, name, tmp_path)
    assert seen["search"], "no visible search box"
    targets = {(site / name).parent.joinpath(link["href"].split("#")[0]).resolve() for link in seen["nav"]}
    for page in NAV_PAGES:
        assert (site / page).resolve() in targets, f"{page} is not in the navigation of {name}"
    texts = [link["text"] for link in seen["nav"]]
    assert "Getting started" in texts and "Command line" in texts
    assert seen["sheets"] >= 2 and seen["header"] == "sticky", "the theme's stylesheets were not applied"
    assert any(r.endswith(".js") for r in seen["resources"]), seen["resources"]
    remote = [r for r in seen["resources"] + seen["assets"] if not r.startswith(served)]
    assert remote == [], remote


# -- every page in a browser, through the DevTools protocol (tests/docs/cdp_probe.mjs) ----------------------
CDP_PROBE = Path(__file__).with_name("cdp_probe.mjs")


def _node_websocket() -> list[str] | None:
    """The node command line that has a WebSocket (Node >= 22 has it; 20.10+ behind a flag), or None."""
    node = shutil.which("node")
    if node is None:
        return None
    for flags in ([], ["--experimental-websocket"]):
        done = subprocess.run(
            [node, *flags, "-e", "process.exit(typeof WebSocket === 'function' ? 0 : 1)"],
            capture_output=True,
            timeout=30,
            check=False,
        )
        if done.returncode == 0:
            return [node, *flags]
    return None


NODE = _node_websocket()
needs_cdp = pytest.mark.skipif(
    CHROMIUM is None or NODE is None,
    reason="chromium and node (>= 20.10, for its WebSocket) are needed to drive the browser",
)

MEASURE = """
const wide = [...document.querySelectorAll("article pre, article pre > code")]
  .filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.innerText.slice(0, 80));
const broken = [...document.querySelectorAll("article td:first-child code")]
  .filter((e) => e.getClientRects().length > 1).map((e) => e.innerText);
return {wide, broken, title: document.title};
"""

SEARCH = """
await new Promise((r) => setTimeout(r, 1500));
const input = document.querySelector("input.md-search__input");
input.focus();
input.value = "claims";
input.dispatchEvent(new Event("input", {bubbles: true}));
input.dispatchEvent(new KeyboardEvent("keyup", {bubbles: true, key: "s"}));
for (let i = 0; i < 100 && !document.querySelector(".md-search-result__item"); i++) {
  await new Promise((r) => setTimeout(r, 100));
}
return {items: document.querySelectorAll(".md-search-result__item").length,
        meta: document.querySelector(".md-search-result__meta").innerText.trim()};
"""


def _probe(expression: str, urls: list[str], shots: Path) -> list[dict]:
    """What :data:`CDP_PROBE` read of each of ``urls`` (one browser for all), screenshots in ``shots``."""
    assert NODE is not None and CHROMIUM is not None
    shots.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [*NODE, str(CDP_PROBE), CHROMIUM, str(shots / "profile"), str(shots), expression, *urls],
        capture_output=True,
        text=True,
        timeout=BROWSER_TIMEOUT * 4,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert [s["url"] for s in seen] == urls, done.stderr[-3000:]
    assert all(s["error"] is None for s in seen), [s["error"] for s in seen]
    return seen


@needs_cdp
def test_no_code_block_overflows_and_no_option_name_breaks(site, tmp_path):
    """Every built page, opened from its file at 1,280 px: no code block is wider than its box (long lines wrap
    instead of hiding past the right edge), no option or measure name in a table's first column is broken
    over two lines; a screenshot of each page's first screens is saved (tmp_path/shots/<n>.png)."""
    pages = sorted(p for p in _pages(site) if p.name != "404.html")
    assert len(pages) >= len(NAV_PAGES)
    seen = _probe(MEASURE, [p.as_uri() for p in pages], tmp_path / "shots")
    wide = {s["url"]: s["value"]["wide"] for s in seen if s["value"]["wide"]}
    broken = {s["url"]: s["value"]["broken"] for s in seen if s["value"]["broken"]}
    assert wide == {} and broken == {}, (wide, broken)
    for n in range(len(pages)):
        shot = tmp_path / "shots" / f"{n}.png"
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000, shot


@needs_cdp
def test_search_works_from_the_files(site, tmp_path):
    """Opened from its files (file://, no server), the site's search finds pages: the offline plugin bundles the
    index, and the web-worker shim it needs is shipped with the site (docs/javascripts), not fetched."""
    (seen,) = _probe(SEARCH, [(site / "index.html").as_uri()], tmp_path / "shots")
    assert seen["value"]["items"] >= 3 and seen["value"]["meta"].endswith("matching documents"), seen


def test_a_code_blocks_option_names_are_never_broken(site, hooks):
    """Every ``--option`` inside a code block is one unbreakable span (a wrapped command breaks between words,
    never inside ``--table-metrics``); text outside code blocks is left alone."""
    html = '<p>--not-here</p><pre><code><span class="w"> </span>eval --table-metrics R@5 x--y</code></pre>'
    done = hooks.on_page_content(html)
    assert done == (
        '<p>--not-here</p><pre><code><span class="w"> </span>eval <span class="am-option">--table-metrics</span> '
        "R@5 x--y</code></pre>"
    )
    page = _soup(site / "cli.html")
    for pre in page.find_all("pre"):
        for text in pre.find_all(string=re.compile(r"(?<![\w-])--[A-Za-z]")):
            assert text.parent.get("class") == ["am-option"], text
