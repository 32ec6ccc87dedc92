"""The one Registry class: run-time registration, names, and entry points of installed packages, loaded lazily."""

from __future__ import annotations

import re
import sys

import pytest
from plugins import install

from agentmemory.errors import ParameterError, UnknownNameError
from agentmemory.registry import Registry

GROUP = "agentmemory_test.widgets"
VALID = (
    "use letters, digits, '_', '.', '+' and '-' (no brackets, commas, colons, '=' or spaces), "
    "starting with a letter, a digit or '_'"
)


def _check(name: str, obj: object) -> tuple[str, int]:
    """A widget is an int; the registry stores it with its name, to show that it stores what check returns."""
    if isinstance(obj, bool) or not isinstance(obj, int):
        raise ParameterError("widget", obj, "is not an int", "register an int")
    return (name, obj)


@pytest.fixture
def widgets() -> Registry:
    """An empty registry of widgets whose entry-point group no real package uses."""
    return Registry("widget", GROUP, _check)


# --- run-time registration ----------------------------------------------------


def test_register_stores_what_check_returns(widgets):
    """register returns the object check made of what was registered, and lookups give that object."""
    stored = widgets.register("a", 1)
    assert stored == ("a", 1)
    assert widgets.get("a") is stored
    assert widgets["a"] is stored
    assert widgets.registered() == {"a": ("a", 1)}


def test_names_are_sorted_and_every_listing_agrees(widgets):
    """names() is sorted; iteration, len, 'in' and repr read the same names."""
    for name in ("b", "A", "a"):
        widgets.register(name, 1)
    assert widgets.names() == ["A", "a", "b"]
    assert list(widgets) == ["A", "a", "b"]
    assert len(widgets) == 3
    assert "a" in widgets and "c" not in widgets and 3 not in widgets
    assert repr(widgets) == "Registry('widget', group='agentmemory_test.widgets', names=['A', 'a', 'b'])"


def test_registering_a_taken_name_is_an_error(widgets):
    """A name registered twice is refused, and the first object stays."""
    widgets.register("a", 1)
    message = (
        "widget name: 'a' (str) is already registered; "
        "pass replace=True to replace the registered widget, or choose another name"
    )
    with pytest.raises(ParameterError, match=f"^{re.escape(message)}$"):
        widgets.register("a", 2)
    assert widgets.get("a") == ("a", 1)


def test_replace_true_replaces(widgets):
    """replace=True puts the new object in place of the old one."""
    widgets.register("a", 1)
    assert widgets.register("a", 2, replace=True) == ("a", 2)
    assert widgets.get("a") == ("a", 2)


def test_replace_true_registers_a_new_name_too(widgets):
    """replace=True on a free name simply registers it."""
    assert widgets.register("new", 5, replace=True) == ("new", 5)
    assert widgets.names() == ["new"]


def test_unregister(widgets):
    """unregister removes a name; looking it up then fails, listing what is left."""
    widgets.register("a", 1)
    widgets.register("b", 2)
    widgets.unregister("a")
    assert widgets.names() == ["b"]
    with pytest.raises(UnknownNameError, match=r"^widget: 'a' \(str\) is not a known name; choose from: b$"):
        widgets.get("a")


def test_unregister_unknown_name(widgets):
    """unregister of a name that is not registered is an error listing the registered names."""
    widgets.register("b", 2)
    with pytest.raises(UnknownNameError, match=r"^widget: 'zz' \(str\) is not a known name; choose from: b$"):
        widgets.unregister("zz")


def test_unknown_name_lists_every_name(widgets):
    """Looking up an unknown name raises UnknownNameError listing names() (here registered ones only)."""
    widgets.register("b", 2)
    widgets.register("a", 1)
    with pytest.raises(UnknownNameError, match=r"^widget: 'c' \(str\) is not a known name; choose from: a, b$"):
        widgets.get("c")
    with pytest.raises(UnknownNameError, match=r"^widget: 3 \(int\) is not a known name; choose from: a, b$"):
        widgets.get(3)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "name", ["", " a", "a b", "P@5", "a,b", "a[x]", "a=b", "a:b", "-a", ".a", "+a", "tab\t", 3, None]
)
def test_invalid_names_are_refused(widgets, name):
    """A name must be text of letters, digits, '_ . + -', not starting with '. + -'; nothing is registered."""
    message = f"widget name: {name!r} ({type(name).__name__}) is not a valid name; {VALID}"
    with pytest.raises(ParameterError, match=f"^{re.escape(message)}$"):
        widgets.register(name, 1)  # type: ignore[arg-type]
    assert widgets.names() == []


@pytest.mark.parametrize("name", ["a", "A1", "_x", "9", "bm25+rm3", "my.pkg-widget_2"])
def test_valid_names(widgets, name):
    """Letters, digits, '_', '.', '+' and '-' make valid names."""
    widgets.register(name, 1)
    assert widgets.names() == [name]


def test_check_refuses_what_is_not_a_widget(widgets):
    """register passes check's error through, and registers nothing."""
    with pytest.raises(ParameterError, match=r"^widget: 'x' \(str\) is not an int; register an int$"):
        widgets.register("a", "x")
    assert widgets.names() == []


# --- entry points of installed packages ---------------------------------------

PLUGIN = """
LOADS = 0
LOADS += 1
WIDGET = 42
"""


def test_entry_point_is_listed_before_it_is_loaded(widgets, tmp_path, monkeypatch):
    """An installed entry point counts in names(), 'in', len and error messages, without importing its module."""
    install(tmp_path, monkeypatch, {GROUP: {"installed": "am_plugin_listed:WIDGET"}}, {"am_plugin_listed": PLUGIN})
    widgets.register("local", 1)
    assert widgets.names() == ["installed", "local"]
    assert "installed" in widgets
    assert len(widgets) == 2
    assert widgets.registered() == {"local": ("local", 1)}
    with pytest.raises(UnknownNameError, match=r"choose from: installed, local$"):
        widgets.get("other")
    assert "am_plugin_listed" not in sys.modules


def test_entry_point_loads_on_first_lookup_only(widgets, tmp_path, monkeypatch):
    """The first lookup imports the entry point and checks its object; later lookups reuse the stored one."""
    install(tmp_path, monkeypatch, {GROUP: {"installed": "am_plugin_lazy:WIDGET"}}, {"am_plugin_lazy": PLUGIN})
    first = widgets.get("installed")
    assert first == ("installed", 42)
    assert sys.modules["am_plugin_lazy"].LOADS == 1
    assert widgets.registered() == {"installed": ("installed", 42)}
    sys.modules["am_plugin_lazy"].WIDGET = 7  # a second load would see this
    assert widgets["installed"] is first


def test_only_the_named_entry_point_is_loaded(widgets, tmp_path, monkeypatch):
    """Looking up one installed name imports its module only, not the other plugins'."""
    install(
        tmp_path,
        monkeypatch,
        {GROUP: {"one": "am_plugin_one:WIDGET", "two": "am_plugin_two:WIDGET"}},
        {"am_plugin_one": PLUGIN, "am_plugin_two": PLUGIN},
    )
    widgets.get("one")
    assert "am_plugin_one" in sys.modules
    assert "am_plugin_two" not in sys.modules


def test_other_groups_are_not_listed(widgets, tmp_path, monkeypatch):
    """Entry points of another group are not this registry's names."""
    install(tmp_path, monkeypatch, {"agentmemory_test.gadgets": {"gadget": "am_plugin_gadget:WIDGET"}})
    assert widgets.names() == []
    assert "gadget" not in widgets


def test_registered_name_wins_over_entry_point(widgets, tmp_path, monkeypatch):
    """A name registered at run time is used as registered; the entry point of that name is not loaded."""
    install(tmp_path, monkeypatch, {GROUP: {"same": "am_plugin_same:WIDGET"}}, {"am_plugin_same": PLUGIN})
    widgets.register("same", 1)
    assert widgets.get("same") == ("same", 1)
    assert widgets.names() == ["same"]
    assert "am_plugin_same" not in sys.modules


def test_unregistered_entry_point_is_loaded_again(widgets, tmp_path, monkeypatch):
    """Unregistering a loaded entry point forgets the loaded object; the next lookup loads it again."""
    install(tmp_path, monkeypatch, {GROUP: {"installed": "am_plugin_again:WIDGET"}}, {"am_plugin_again": PLUGIN})
    widgets.get("installed")
    widgets.unregister("installed")
    assert widgets.registered() == {}
    assert widgets.names() == ["installed"]
    sys.modules["am_plugin_again"].WIDGET = 7
    assert widgets.get("installed") == ("installed", 7)


@pytest.mark.parametrize(
    ("source", "value", "error"),
    [
        (
            "raise RuntimeError('plugin import failed')\n",
            "am_plugin_broken:WIDGET",
            "RuntimeError: plugin import failed",
        ),
        (
            "import am_no_such_module_here\n",
            "am_plugin_broken:WIDGET",
            "ModuleNotFoundError: No module named 'am_no_such_module_here'",
        ),
        (
            "OTHER = 1\n",
            "am_plugin_broken:WIDGET",
            "AttributeError: module 'am_plugin_broken' has no attribute 'WIDGET'",
        ),
    ],
    ids=["raises", "missing-import", "missing-attribute"],
)
def test_failing_entry_point_is_one_error_line(widgets, tmp_path, monkeypatch, source, value, error):
    """An entry point that fails to load gives one ParameterError line naming it and its group, and stays unloaded."""
    install(tmp_path, monkeypatch, {GROUP: {"broken": value}}, {"am_plugin_broken": source})
    message = (
        f"widget: 'broken' (str) comes from the entry point {value!r} (group {GROUP}), which failed to load: "
        f"{error}; fix or uninstall the package that provides it"
    )
    with pytest.raises(ParameterError, match=f"^{re.escape(message)}$") as info:
        widgets.get("broken")
    assert "\n" not in str(info.value)
    assert info.value.__cause__ is None and info.value.__suppress_context__
    assert widgets.registered() == {}
    assert widgets.names() == ["broken"]


def test_entry_point_of_the_wrong_type_is_refused(widgets, tmp_path, monkeypatch):
    """An entry point whose object check refuses is an error naming the entry point, and is not registered."""
    install(
        tmp_path, monkeypatch, {GROUP: {"wrong": "am_plugin_wrong:WIDGET"}}, {"am_plugin_wrong": "WIDGET = 'text'\n"}
    )
    message = (
        f"widget: 'wrong' (str) comes from the entry point 'am_plugin_wrong:WIDGET' (group {GROUP}), "
        "whose object is not an int; register an int"
    )
    with pytest.raises(ParameterError, match=f"^{re.escape(message)}$"):
        widgets.get("wrong")
    assert widgets.registered() == {}
