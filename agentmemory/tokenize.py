"""The one tokeniser every retriever shares.

``tokenize(text)`` does exactly this, in order:

1. Unicode NFKC normalisation (full-width letters and ligatures become their
   plain forms: ``"ﬁle"`` -> ``"file"``, ``"ＡＢＣ"`` -> ``"ABC"``).
2. Full Unicode case folding with :meth:`str.casefold` (``"Straße"`` ->
   ``"strasse"``).
3. Splitting into maximal runs of Unicode letters, numbers and combining
   marks (general categories ``L*``, ``N*`` and ``M*``) that begin with a
   letter or number: the regular expression
   ``[^\\W_](?:[^\\W_]|[<every M* code point>])*``.  Python's ``\\w``
   alone leaves combining marks out, which would cut ``"हिन्दी"`` into
   ``["ह", "न", "द"]``; with the marks it stays one token.  A mark with no
   letter before it (NFKC turns ``"‾"`` into a space and a combining
   overline) is not a token.  Every other
   character (white space, punctuation, symbols, ``_``) separates tokens, so
   ``"e-mail"`` -> ``["e", "mail"]`` and ``"v2.1"`` -> ``["v2", "1"]``.
   Scripts written without spaces (Chinese, Japanese, Thai) are not
   segmented: a run of their letters is one token.

No stopwords are removed and nothing is stemmed: what a query says is what is
matched.  Tokens keep their order and duplicates (BM25 counts them).

This function is the definition and the reference.  The retrievers tokenise
in bulk through one seam, :func:`agentmemory.retrievers._analysis.encode_texts`,
which computes exactly this with faster paths for ASCII text (on ASCII the
rule reduces to "lower-case, then maximal runs of ``[a-z0-9]``"); the tests
check every path against this function.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["normalize_tag", "tokenize"]


def _mark_class() -> str:
    """Regex class body of every combining mark (categories Mn, Mc, Me), as ranges.

    Unicode places marks only in planes 0, 1 and 14 (variation selectors
    supplement), so only those are scanned (about 10 ms, on the first call of :func:`tokenize`).
    """
    parts: list[str] = []
    start = prev = -2
    for cp in (*range(0x20000), *range(0xE0000, 0xE1000)):
        if unicodedata.category(chr(cp))[0] != "M":
            continue
        if cp != prev + 1:
            if start >= 0:
                parts.append(f"{re.escape(chr(start))}-{re.escape(chr(prev))}")
            start = cp
        prev = cp
    parts.append(f"{re.escape(chr(start))}-{re.escape(chr(prev))}")
    return "".join(parts)


_TOKEN: re.Pattern[str] | None = None  # compiled on first use (scanning Unicode's marks costs about 10 ms)


def _token_pattern() -> re.Pattern[str]:
    global _TOKEN
    if _TOKEN is None:
        _TOKEN = re.compile(rf"[^\W_](?:[^\W_]|[{_mark_class()}])*")
    return _TOKEN


def tokenize(text: str) -> list[str]:
    """Split ``text`` into tokens (see the module docstring for the exact rule)."""
    return (_TOKEN or _token_pattern()).findall(unicodedata.normalize("NFKC", text).casefold())


def normalize_tag(tag: str) -> str:
    """A tag's comparable form: its tokens joined by ``-``.

    ``"Dietary Preferences"``, ``"dietary-preferences"`` and
    ``"dietary_preferences"`` all become ``"dietary-preferences"``.
    """
    return "-".join(tokenize(tag))
