"""The one tokeniser every retriever shares.

``tokenize(text)`` does exactly this, in order:

1. Unicode NFKC normalisation (full-width letters and ligatures become their
   plain forms: ``"ﬁle"`` -> ``"file"``, ``"ＡＢＣ"`` -> ``"ABC"``).
2. Full Unicode case folding with :meth:`str.casefold` (``"Straße"`` ->
   ``"strasse"``).
3. Splitting into maximal runs of Unicode letters, digits and combining
   marks: the regular expression ``[^\\W_]+`` with :data:`re.UNICODE`.  Every
   other character (white space, punctuation, symbols, ``_``) separates
   tokens, so ``"e-mail"`` -> ``["e", "mail"]`` and ``"v2.1"`` -> ``["v2", "1"]``.

No stopwords are removed and nothing is stemmed: what a query says is what is
matched.  Tokens keep their order and duplicates (BM25 counts them).
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["normalize_tag", "tokenize"]

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)


def tokenize(text: str) -> list[str]:
    """Split ``text`` into tokens (see the module docstring for the exact rule)."""
    return _TOKEN.findall(unicodedata.normalize("NFKC", text).casefold())


def normalize_tag(tag: str) -> str:
    """A tag's comparable form: its tokens joined by ``-``.

    ``"Dietary Preferences"``, ``"dietary-preferences"`` and
    ``"dietary_preferences"`` all become ``"dietary-preferences"``.
    """
    return "-".join(tokenize(tag))
