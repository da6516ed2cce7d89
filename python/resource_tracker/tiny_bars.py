"""tiny_bars.py - a small Handlebars-like template engine (the Python resource-tracker 0.5's
`tiny_bars`): render_template(template, context) with {{ expr }} (HTML-escaped), {{{ expr }}}
(raw), {{#if expr}}...{{else}}...{{/if}}, {{#each expr as item}}...{{else}}...{{/each}},
dotted names over dicts, object attributes, list indices and TinyDataFrame columns, and filters
(`{{ x | divide:1000 | round:2 }}`). Pure Python: the template is parsed into a tree once, then
rendered; a malformed template raises ValueError, a value that cannot be resolved is shown
inline as `[Error: expr - why]`."""

from __future__ import annotations

import re
from functools import lru_cache
from html import escape

# {{{ expr }}}: a raw value
TRIPLE_RE = re.compile(r"\{\{\{\s*([^{}]*?)\s*\}\}\}")
# {{ tag expr }}: a block tag (#each, #if, else or #else, /each, /if) or an escaped value
DOUBLE_RE = re.compile(
    r"\{\{\s*(#each\b|#if\b|/each\b|/if\b|#?else(?=\s*\}\}))?\s*([^{}]*?)\s*\}\}")
# the argument of #each: "collection as item"
EACH_RE = re.compile(r"^\s*([^{}]*?)\s+as\s+([^\s{}|.]+)\s*$")
# a value expression: "name" then any "| filter" (group 2: the filters, each after a "|")
FILTER_RE = re.compile(r"^\s*([^|]*?)\s*((?:\|[^|]*)*)$")
# one filter: "name" or "name:parameter"
FILTER_PARAM_RE = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?::\s*(.*?))?\s*$")

_TOKEN_RE = re.compile(TRIPLE_RE.pattern + "|" + DOUBLE_RE.pattern)
_MISSING = object()


def _lookup(value, part: str):
    """value's part: a TinyDataFrame column, a dict key, a list/tuple index, an attribute;
    _MISSING when there is none."""
    from .tiny_data_frame import TinyDataFrame

    if isinstance(value, TinyDataFrame):
        return value[part] if part in value.columns else _MISSING
    if isinstance(value, dict):
        return value.get(part, _MISSING)
    if isinstance(value, (list, tuple)) and (part.isdigit() or part[:1] == "-" and part[1:].isdigit()):
        i = int(part)
        return value[i] if -len(value) <= i < len(value) else _MISSING
    return getattr(value, part, _MISSING)


def _parse_param(text: str):
    """A filter's parameter as an int, else a float, else the string (quotes removed)."""
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _resolve_var(name: str, ctx: dict):
    """The value of a name in ctx, through dotted parts (dict keys, object attributes, list
    indices, TinyDataFrame columns), then through each filter after a `|` in turn.

    Raises KeyError when a part is missing, ValueError on an unknown filter or one that
    cannot apply.

    >>> _resolve_var("user.name", {"user": {"name": "John"}})
    'John'
    >>> _resolve_var("user.age", {"user": {"name": "John"}})
    Traceback (most recent call last):
    ...
    KeyError: 'age not found in user.age'
    >>> _resolve_var("runs.1.cpu | round:1", {"runs": [{"cpu": 1.0}, {"cpu": 2.345}]})
    2.3
    >>> _resolve_var("user.age | divide:1000 | round:2", {"user": {"age": 1234567}})
    1234.57
    """
    m = FILTER_RE.match(name)
    if not m or not m.group(1):
        raise ValueError(f"Invalid expression: {name!r}")
    var_name, filters = m.group(1), m.group(2)
    value = ctx
    for part in var_name.split("."):
        value = _lookup(value, part)
        if value is _MISSING:
            raise KeyError(f"{part} not found in {var_name}")
    for expr in filters.split("|")[1:]:
        fm = FILTER_PARAM_RE.match(expr)
        if not fm:
            raise ValueError(f"Invalid filter expression: {expr.strip()!r}")
        fn = _get_filter(fm.group(1))
        if fn is None:
            raise ValueError(f"Unknown filter: {fm.group(1)}")
        value = fn(value) if fm.group(2) is None else fn(value, _parse_param(fm.group(2)))
    return value


def _get_filter(name: str):
    """The filter function of that name, or None."""
    return _FILTERS.get(name)


def _filter_index(value, index: int = 0):
    """value[index] (a list, a string, a dict's key).

    >>> _filter_index([3, 4, 5], 1)
    4
    """
    try:
        return value[index]
    except Exception:
        raise ValueError(f"Invalid index: {index} for {value}") from None


def _filter_pretty_number(value, digits: int = 0) -> str:
    """A number with thousands separators, at most `digits` decimals and no trailing zeros
    (a whole number shows no decimals); anything that is not a number as str(value).

    >>> _filter_pretty_number(1234567)
    '1,234,567'
    >>> _filter_pretty_number(1234.5678, 2), _filter_pretty_number(12.00012, 2)
    ('1,234.57', '12')
    >>> _filter_pretty_number("n/a")
    'n/a'
    """
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"  # exact, however large
    try:
        num = float(value)
    except (TypeError, ValueError):
        return str(value)
    if num.is_integer():
        return f"{int(num):,}"
    text = f"{num:,.{max(int(digits), 0)}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _filter_divide(value, divisor=1) -> float:
    """value / divisor, both numbers, divisor not 0 (else ValueError).

    >>> _filter_divide(1234567, 1000)
    1234.567
    """
    for what, v in (("value", value), ("divisor", divisor)):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ValueError(f"Invalid {what}: {v} should be a number")
    if divisor == 0:
        raise ValueError(f"Division by zero: {value} / {divisor}")
    return value / divisor


def _filter_round(value, digits: int = 0):
    """value as a float rounded to `digits` decimals; value itself when it is not a number.

    >>> _filter_round(1234.5678, 2), _filter_round("x")
    (1234.57, 'x')
    """
    try:
        return round(float(value), int(digits))
    except (TypeError, ValueError):
        return value


def _filter_round_memory(mib) -> int:
    """An amount of MiB rounded up as the recommendations round memory (helpers.round_memory).

    >>> _filter_round_memory(42)
    128
    """
    from .helpers import round_memory

    return round_memory(mib)


def _filter_unix_timestamp_to_local_tz_string(value) -> str:
    """A Unix timestamp as "YYYY-MM-DD HH:MM:SS TZ" in the local time zone."""
    from time import localtime, strftime

    return strftime("%Y-%m-%d %H:%M:%S %Z", localtime(value))


_FILTERS = {
    "index": _filter_index,
    "pretty_number": _filter_pretty_number,
    "divide": _filter_divide,
    "round": _filter_round,
    "round_memory": _filter_round_memory,
    "unix_timestamp_to_local_tz_string": _filter_unix_timestamp_to_local_tz_string,
}


class _Block:
    """An #if or #each block being parsed: its tag, argument, body and else-body."""

    __slots__ = ("tag", "arg", "body", "other", "in_else", "pos")

    def __init__(self, tag: str, arg, pos: int):
        self.tag, self.arg, self.pos = tag, arg, pos
        self.body: list = []
        self.other: list = []
        self.in_else = False

    def nodes(self) -> list:
        return self.other if self.in_else else self.body


def _line_of(template: str, pos: int) -> int:
    return template.count("\n", 0, pos) + 1


@lru_cache(maxsize=32)
def _parse(template: str) -> list:
    """The template as a list of nodes: str (text), ("var", expr, escaped),
    ("if", expr, body, else_body), ("each", collection, item, body, else_body). The last
    templates' trees are kept (they are never changed once built)."""
    root = _Block("", None, 0)
    stack = [root]
    pos = 0
    for m in _TOKEN_RE.finditer(template):
        if m.start() > pos:
            stack[-1].nodes().append(template[pos:m.start()])
        pos = m.end()
        raw, tag, expr = m.group(1), m.group(2), m.group(3)
        where = f"at line {_line_of(template, m.start())}"
        if raw is not None:
            stack[-1].nodes().append(("var", raw, False))
        elif tag is None:
            stack[-1].nodes().append(("var", expr, True))
        elif tag == "#if":
            if not expr:
                raise ValueError(f"{{{{#if}}}} without a condition {where}")
            stack.append(_Block("if", expr, m.start()))
        elif tag == "#each":
            em = EACH_RE.match(expr)
            if not em:
                raise ValueError(f"Invalid #each syntax {where}: use {{{{#each expr as item}}}}")
            stack.append(_Block("each", (em.group(1), em.group(2)), m.start()))
        elif tag in ("else", "#else"):
            block = stack[-1]
            if block is root or block.in_else:
                raise ValueError(f"{{{{{tag}}}}} outside an #if or #each block {where}")
            block.in_else = True
        else:  # /if, /each
            block = stack[-1]
            if block.tag != tag[1:]:
                opened = f"#{block.tag}" if block is not root else "no block"
                raise ValueError(f"{{{{{tag}}}}} {where} closes {opened}")
            stack.pop()
            if block.tag == "if":
                stack[-1].nodes().append(("if", block.arg, block.body, block.other))
            else:
                stack[-1].nodes().append(("each", *block.arg, block.body, block.other))
    if len(stack) > 1:
        block = stack[-1]
        raise ValueError(f"Unclosed #{block.tag} at line {_line_of(template, block.pos)}")
    if pos < len(template):
        root.body.append(template[pos:])
    return root.body


def _render(nodes: list, ctx: dict, out: list) -> None:
    from .tiny_data_frame import TinyDataFrame

    for node in nodes:
        if isinstance(node, str):
            out.append(node)
            continue
        kind = node[0]
        if kind == "var":
            _, expr, escaped = node
            try:
                value = _resolve_var(expr, ctx)
            except Exception as e:  # a missing name, a filter that does not apply
                msg = e.args[0] if isinstance(e, KeyError) and e.args else e
                out.append(escape(f"[Error: {expr} - {msg}]"))
                continue
            if value is not None:
                out.append(escape(str(value), quote=True) if escaped else str(value))
        elif kind == "if":
            _, expr, body, other = node
            try:
                met = bool(_resolve_var(expr, ctx))
            except Exception:  # a missing name, or a filter that does not apply: false
                met = False
            _render(body if met else other, ctx, out)
        else:
            _, expr, item, body, other = node
            try:
                items = _resolve_var(expr, ctx)
            except Exception as e:  # a missing name, a filter that does not apply
                msg = e.args[0] if isinstance(e, KeyError) and e.args else e
                out.append(escape(f"[Error: {expr} - {msg}]"))
                continue
            if not isinstance(items, (list, tuple, TinyDataFrame)):
                out.append(escape(f"[Error: {expr} is not a list]"))
                continue
            if len(items) == 0:
                _render(other, ctx, out)
            for i, value in enumerate(items):
                inner = dict(ctx)
                inner[item] = value
                inner["@index"] = i
                _render(body, inner, out)


def render_template(template: str, context: dict) -> str:
    """The template rendered with the context (a dict; it is not changed).

    - `{{ expr }}`: the value, HTML-escaped; `{{{ expr }}}`: the value as is. None renders
      as nothing; a missing name or a failing filter as `[Error: expr - why]`.
    - `expr` is a dotted name (dict keys, attributes, list indices, TinyDataFrame columns)
      followed by filters: `| index:N`, `| pretty_number[:digits]`, `| divide:N`,
      `| round[:digits]`, `| round_memory`, `| unix_timestamp_to_local_tz_string`.
    - `{{#if expr}}A{{else}}B{{/if}}` (also `{{#else}}`): A when expr is truthy, else B; a
      missing name is false.
    - `{{#each expr as item}}A{{else}}B{{/each}}`: A for each element of a list, tuple or
      TinyDataFrame (its rows as dicts) with `item` and `@index` set; B when it is empty.
    - A block left open, a stray or mismatched closing tag: ValueError.

    >>> render_template("Hello, {{name}}!", {"name": "<World>"})
    'Hello, &lt;World&gt;!'
    >>> render_template("{{#each xs as x}}{{#if x.odd}}{{x.v}} {{/if}}{{/each}}",
    ...                 {"xs": [{"v": i, "odd": i % 2} for i in range(6)]})
    '1 3 5 '
    >>> render_template("{{#if ok}}yes{{#else}}no{{/if}}", {"ok": 0})
    'no'
    >>> render_template("{{ v | pretty_number:2 }} {{{ raw }}}", {"v": 1234.5678, "raw": "<b>"})
    '1,234.57 <b>'
    """
    out: list = []
    _render(_parse(template), context, out)
    return "".join(out)
