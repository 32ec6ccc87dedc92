"""The one tokeniser: NFKC, case folding, what splits tokens, non-Latin scripts; tag normalisation."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from agentmemory.tokenize import normalize_tag, tokenize


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # white space and punctuation split; nothing else is removed
        ("Hello, World!", ["hello", "world"]),
        ("", []),
        (" \t\n\r ", []),
        ("!!! ... ???", []),
        ("the the THE", ["the", "the", "the"]),  # no stopwords, duplicates kept, in order
        ("e-mail", ["e", "mail"]),
        ("orbit-api's TLS", ["orbit", "api", "s", "tls"]),
        ("v2.1", ["v2", "1"]),
        ("user@example.com", ["user", "example", "com"]),
        ("C++ & C#", ["c", "c"]),
        ("a\u200bb", ["a", "b"]),  # zero-width space separates
        # underscores separate, unlike Python's \w
        ("snake_case_name", ["snake", "case", "name"]),
        ("__init__", ["init"]),
        # digits stay inside tokens; no number parsing
        ("22 May 2026", ["22", "may", "2026"]),
        ("TP573", ["tp573"]),
        ("9:30", ["9", "30"]),
        ("3.14159", ["3", "14159"]),
        ("٣٤", ["٣٤"]),  # Arabic-Indic digits are digits
        # NFKC: compatibility forms become plain ones
        ("ﬁle", ["file"]),  # ligature
        ("ＡＢＣ１２３", ["abc123"]),  # full-width
        ("²", ["2"]),  # superscript
        ("½", ["1", "2"]),  # becomes 1⁄2 (fraction slash separates)
        ("Ⅻ", ["xii"]),  # Roman numeral letter
        ("ﾃｽﾄ", ["テスト"]),  # half-width katakana
        ("cafe\u0301", ["café"]),  # decomposed e + combining acute composes to é
        ("™", ["tm"]),  # a symbol that NFKC turns into letters
        ("‾ ¨", []),  # NFKC gives a space and a combining mark: no letter, no token
        ("\u0301x", ["x"]),  # a mark with no letter before it is dropped
        # case folding is full Unicode folding, not lower()
        ("Straße", ["strasse"]),
        ("ΣΊΣΥΦΟΣ", ["σίσυφοσ"]),
        ("ǅemal", ["džemal"]),  # title-case digraph
        # non-Latin scripts: letters and combining marks stay together
        ("Привет, мир", ["привет", "мир"]),
        ("مرحبا بالعالم", ["مرحبا", "بالعالم"]),
        ("हिन्दी भाषा", ["हिन्दी", "भाषा"]),  # vowel signs and virama are combining marks
        ("ที่นี่", ["ที่นี่"]),  # Thai tone marks; Thai is not segmented
        ("東京タワーに行く", ["東京タワーに行く"]),  # CJK is not segmented: one run, one token
        ("İstanbul", ["i\u0307stanbul"]),  # casefold keeps the dot as a combining mark, in the token
    ],
)
def test_tokenize_table(text: str, expected: list[str]) -> None:
    """tokenize follows the module's stated rule on each case of the table."""
    assert tokenize(text) == expected


def test_tokenize_matches_query_and_memory_across_forms() -> None:
    """Full-width, ligature, case and decomposed forms of a word give the same token."""
    forms = ["CAFÉ", "café", "cafe\u0301", "ＣＡＦＥ\u0301"]
    assert {tuple(tokenize(f)) for f in forms} == {("café",)}


_TOKEN_CATEGORIES = ("L", "N", "M")


@given(st.text())
def test_every_token_is_letters_numbers_and_marks(text: str) -> None:
    """Every token is non-empty and made only of letters, numbers and combining marks."""
    for token in tokenize(text):
        assert token
        assert all(unicodedata.category(ch)[0] in _TOKEN_CATEGORIES for ch in token), token


@given(st.text(), st.text())
def test_a_space_between_texts_only_concatenates_their_tokens(left: str, right: str) -> None:
    """Tokenising ``left + " " + right`` gives the tokens of each part, in order."""
    assert tokenize(left + " " + right) == tokenize(left) + tokenize(right)


@given(st.text(alphabet=st.characters(categories=("Z", "P", "S"))))
def test_separators_alone_give_no_token(text: str) -> None:
    """Text that is still only white space, punctuation, symbols (and marks) after NFKC has no token.

    (Some symbols are letters in disguise: NFKC turns "™" into "TM"; those are left out here.)
    """
    normalised = unicodedata.normalize("NFKC", text).casefold()
    assume(all(unicodedata.category(ch)[0] not in "LN" for ch in normalised))
    assert tokenize(text) == []


@pytest.mark.parametrize(
    ("tag", "expected"),
    [
        ("diet", "diet"),
        ("Dietary Preferences", "dietary-preferences"),
        ("dietary-preferences", "dietary-preferences"),
        ("dietary_preferences", "dietary-preferences"),
        ("  Dietary   --  Preferences ", "dietary-preferences"),
        ("project-orbit", "project-orbit"),
        ("Project_Orbit", "project-orbit"),
        ("ＰＲＯＪＥＣＴ ＯＲＢＩＴ", "project-orbit"),
        ("Straße", "strasse"),
        ("C++", "c"),
        ("v2.1", "v2-1"),
        ("हिन्दी", "हिन्दी"),
        ("", ""),
        ("---", ""),
    ],
)
def test_normalize_tag_table(tag: str, expected: str) -> None:
    """normalize_tag joins a tag's tokens with '-': spelling variants of one tag compare equal."""
    assert normalize_tag(tag) == expected


@given(st.text())
def test_normalize_tag_is_idempotent_on_its_tokens(tag: str) -> None:
    """A normalised tag's tokens are the original tag's tokens (normalising adds and loses no word)."""
    assert tokenize(normalize_tag(tag)) == tokenize(tag)
