"""tiny_bars, the small Handlebars-like engine: values escaped and raw, dotted names (dicts,
attributes, list indices, TinyDataFrame columns), every filter, #if/#else and #each/else nested
in each other, what a missing name gives in each place, and the malformed templates that raise."""
import re

import pytest

from resource_tracker.tiny_bars import (_filter_pretty_number, _resolve_var,
                                        render_template as r)
from resource_tracker.tiny_data_frame import TinyDataFrame


def test_values_escaped_and_raw():
    ctx = {"s": "<a href=\"x\">&'</a>", "n": 0, "none": None, "f": False}
    assert r("{{ s }}", ctx) == "&lt;a href=&quot;x&quot;&gt;&amp;&#x27;&lt;/a&gt;"
    assert r("{{{ s }}}", ctx) == ctx["s"]
    assert r("{{{s}}}|{{s}}", {"s": "&"}) == "&|&amp;"
    assert r("[{{ n }}][{{ none }}][{{ f }}]", ctx) == "[0][][False]"  # None renders as nothing
    assert r("a { b } {{ c }} }}", {"c": 1}) == "a { b } 1 }}"  # stray braces are text
    assert r("no tags", {}) == "no tags" and r("", {}) == ""
    assert r("{{ x }}\n", {"x": "é"}) == "é\n"


def test_dotted_names():
    class Obj:
        def __init__(self):
            self.inner = {"k": [10, 20, 30]}

    df = TinyDataFrame({"cpu": [1.5, 2.5], "pid": [7, 8]})
    ctx = {"o": Obj(), "df": df, "rows": [{"a": 1}, {"a": 2}]}
    assert r("{{ o.inner.k.1 }} {{ o.inner.k.-1 }}", ctx) == "20 30"
    assert r("{{ df.cpu | index:1 }} {{ rows.0.a }}", ctx) == "2.5 1"
    assert _resolve_var("df.pid", ctx) == [7, 8]
    assert _resolve_var("rows", ctx) is ctx["rows"]
    for missing in ("o.nope", "o.inner.k.3", "df.nope", "rows.x", "nope"):
        with pytest.raises(KeyError):
            _resolve_var(missing, ctx)


def test_missing_names():
    # shown inline (escaped) where a value goes; false in a condition; shown for a collection
    assert r("a{{ user.name }}b", {"user": {}}) == "a[Error: user.name - name not found in user.name]b"
    assert r("{{{ x }}}", {}) == "[Error: x - x not found in x]"
    assert r("{{ x | nofilter }}", {"x": 1}) == "[Error: x | nofilter - Unknown filter: nofilter]"
    assert r("{{#if a.b.c}}T{{else}}F{{/if}}", {"a": {}}) == "F"
    assert r("{{#if x | divide:0}}T{{else}}F{{/if}}", {"x": 1}) == "F"
    assert r("{{#each xs as x}}.{{/each}}", {}) == "[Error: xs - xs not found in xs]"
    assert r("{{#each xs as x}}.{{/each}}", {"xs": "abc"}) == "[Error: xs is not a list]"
    assert r("{{#each xs as x}}.{{/each}}", {"xs": {"a": 1}}) == "[Error: xs is not a list]"


def test_filters():
    ctx = {"v": 1234567, "f": 1234.5678, "m": 42, "big": 12345678901234567890, "neg": -1234.5}
    assert r("{{ v | divide:1000 | round:2 }}", ctx) == "1234.57"
    assert r("{{ f | round }} {{ f | round:1 }}", ctx) == "1235.0 1234.6"
    assert r("{{ v | pretty_number }} {{ f | pretty_number:2 }}", ctx) == "1,234,567 1,234.57"
    assert r("{{ big | pretty_number }}", ctx) == "12,345,678,901,234,567,890"
    assert r("{{ neg | pretty_number }} {{ neg | pretty_number:3 }}", ctx) == "-1,234 -1,234.5"
    assert r("{{ m | round_memory }} {{ v|divide:1024|round_memory }}", ctx) == "128 2048"
    assert r("{{ v | divide:x }}", ctx) == "[Error: v | divide:x - Invalid divisor: x should be a number]"
    assert r("{{ v | divide:0 }}", ctx) == "[Error: v | divide:0 - Division by zero: 1234567 / 0]"
    assert r("{{ v | index:0 }}", ctx).startswith("[Error: v | index:0 - Invalid index")
    assert r("{{ s | round:2 }}", {"s": "n/a"}) == "n/a"
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S*",
                        r("{{ t | unix_timestamp_to_local_tz_string }}", {"t": 1737676800}))
    assert _filter_pretty_number(-0.4) == "0" and _filter_pretty_number(0.5, 1) == "0.5"
    assert _filter_pretty_number(True) == "1" and _filter_pretty_number(None) == "None"
    assert _filter_pretty_number(float("nan")) == "nan"


def test_if_and_each_nested():
    tpl = ("{{#each groups as g}}[{{ g.name }}:"
           "{{#each g.items as it}}{{#if it.on}}{{ it.v }}{{else}}-{{/if}}"
           "{{#each it.tags as t}}<{{ t }}/{{ g.name }}>{{/each}}{{/each}}"
           "{{#if g.items}}{{else}}empty{{/if}}]{{/each}}")
    ctx = {"groups": [{"name": "a", "items": [{"v": 1, "on": True, "tags": ["x", "y"]},
                                              {"v": 2, "on": False, "tags": []}]},
                      {"name": "b", "items": []}]}
    assert r(tpl, ctx) == "[a:1<x/a><y/a>-]" "[b:empty]"
    # the inner #if's else belongs to the inner block; the outer one still has its own
    tpl = "{{#if a}}A{{#if b}}B{{#else}}b{{/if}}{{#else}}x{{#if b}}B{{/if}}{{/if}}"
    assert [r(tpl, {"a": a, "b": b}) for a in (1, 0) for b in (1, 0)] == ["AB", "Ab", "xB", "x"]
    # each's else, @index, an item name shadowing an outer one and restored after the loop
    tpl = "{{ x }}{{#each xs as x}}{{ @index }}={{ x }},{{else}}none{{/each}}{{ x }}"
    assert r(tpl, {"x": "o", "xs": ["p", "q"]}) == "o0=p,1=q,o"
    assert r(tpl, {"x": "o", "xs": ()}) == "ononeo"
    rows = TinyDataFrame({"pid": [1, 2], "cpu": [0.5, 1.5]})
    assert r("{{#each rows as row}}{{ row.pid }}:{{ row.cpu }};{{/each}}", {"rows": rows}) == "1:0.5;2:1.5;"


def test_context_not_changed():
    ctx = {"xs": [1, 2], "x": 0}
    r("{{#each xs as x}}{{ x }}{{/each}}", ctx)
    assert ctx == {"xs": [1, 2], "x": 0}


@pytest.mark.parametrize("tpl, message", [
    ("{{#if a}}x", "Unclosed #if at line 1"),
    ("a\n{{#each xs as x}}\n{{#if x}}{{/if}}", "Unclosed #each at line 2"),
    ("x{{/if}}", "closes no block"),
    ("{{#if a}}{{/each}}", "closes #if"),
    ("{{#each xs as x}}{{/if}}{{/each}}", "closes #each"),
    ("{{#each xs}}{{/each}}", "Invalid #each syntax"),
    ("{{#if}}{{/if}}", "without a condition"),
    ("{{else}}", "outside an #if or #each"),
    ("{{#if a}}{{else}}{{else}}{{/if}}", "outside an #if or #each"),
])
def test_malformed_templates_raise(tpl, message):
    with pytest.raises(ValueError, match=message):
        r(tpl, {"a": 1, "xs": [1]})
