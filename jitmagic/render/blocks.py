"""A report built once, as blocks, then rendered as text and as HTML: escaping at one place."""

from __future__ import annotations

import base64
import html
import math
import os
import re
import shlex
import textwrap
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

from ..model.comparison import Comparison
from ..model.saved.schema import printable
from ..model.stats.units import cut_to, fmt_s
from ..model.sweep import Sweep
from ..model.target import TARGET
from ..options import WHY_PARTS
from ..options.table import cold_command

T = TypeVar("T")

#: Long texts (a jaxpr) are cut to this many lines or characters when shown.
MAX_LINES, MAX_CHARS = 300, 100_000
#: Lists shown item by item show at most this many, then how many more (render in a second).
MAX_ITEMS = 50
#: Code (a function's name) shows at most this many characters; the record keeps it whole.
MAX_NAME = 200

STYLES = {"": "", "error": " style='color:#a00'", "warning": " style='color:#a60'",
          "note": "", "verdict": " class='jitcompare-verdict'"}


class Html(str):
    """Markup that this module assembled from escaped parts and fixed tags."""

    __slots__ = ()


@dataclass(frozen=True)
class Code:
    """A name shown as code: ``<code>`` in HTML; in text bare, or in backquotes if ``ticks``."""

    text: str
    ticks: bool = False


@dataclass(frozen=True)
class Strong:
    """Words that must stand out: ``<b>`` in HTML, capitals in text."""

    text: str


Inline = str | Code | Strong


def prose(text: str) -> tuple[Inline, ...]:
    """``text`` split at its backquotes: the quoted names become :class:`Code`."""
    parts = re.split(r"`([^`]+)`", text)
    return tuple(Code(p, ticks=True) if i % 2 else p for i, p in enumerate(parts) if p)


def shown_name(text: str, width: int = MAX_NAME) -> str:
    """A name as a report shows it: cut to ``width`` characters, ending in ``…``."""
    return cut_to(text, width)


def _inline_text(parts: Sequence[Inline]) -> str:
    return printable("".join(p.text.upper() if isinstance(p, Strong)
                             else f"`{shown_name(p.text)}`" if isinstance(p, Code) and p.ticks
                             else shown_name(p.text) if isinstance(p, Code) else p
                             for p in parts))


def _inline_html(parts: Sequence[Inline]) -> Html:
    return Html("".join(f"<b>{html.escape(p.text)}</b>" if isinstance(p, Strong)
                        else f"<code>{html.escape(shown_name(p.text))}</code>"
                        if isinstance(p, Code) else html.escape(p) for p in parts))


def _parts(x: str | Inline | Sequence[Inline]) -> tuple[Inline, ...]:
    """A prose string (backquotes mark code), one :class:`Code`, or a sequence of both."""
    if isinstance(x, str):
        return prose(x)
    return (x,) if isinstance(x, Code | Strong) else tuple(x)


def clip(text: str, max_lines: int = MAX_LINES, max_chars: int = MAX_CHARS) -> str:
    """``text`` cut to ``max_lines`` lines and ``max_chars`` characters, saying what was cut."""
    lines = text.splitlines()
    kept = "\n".join(lines[:max_lines])[:max_chars]
    left = len(lines) - kept.count("\n") - 1 if lines else 0
    if kept == "\n".join(lines):
        return text
    return (f"{kept}\n… {left} more line{'s' * (left != 1)} "
            f"(of {len(lines)}, {len(text):,} characters)")


def first(xs: Sequence[T], limit: int = MAX_ITEMS) -> tuple[Sequence[T], int]:
    """The first ``limit`` items of ``xs``, and how many were left out."""
    return xs[:limit], max(len(xs) - limit, 0)


def more(left: int, what: str, of: int | None = None) -> str:
    """``… 950 more helpers (of 1,000)``: the line a clipped list ends with ("" if none)."""
    if not left:
        return ""
    return f"… {left:,} more {what}" + (f" (of {of:,})" if of is not None else "")


@dataclass(frozen=True)
class Cell:
    """A table cell: ``text``, a second line ``detail``, all of it code if ``code``."""

    text: str | Sequence[Inline]
    detail: str = ""
    code: bool = False

    def _main(self) -> tuple[Inline, ...]:
        if isinstance(self.text, str):
            return (Code(self.text) if self.code else self.text,)
        return tuple(self.text)

    def as_text(self) -> str:
        main = _inline_text(self._main())
        return f"{main} [{printable(self.detail)}]" if self.detail else main

    def as_html(self) -> Html:
        return Html(_inline_html(self._main()) + (f"<br><small>{html.escape(self.detail)}</small>"
                                                  if self.detail else ""))


def aligned(rows: Sequence[Sequence[str]], left: int | None = None,
            indent: str = "") -> list[str]:
    """``rows`` in aligned columns, the first ``left`` (default: all) flush left, the rest right."""
    widths = [max(len(x) for x in col) for col in zip(*rows, strict=True)]
    return [indent + "  ".join(x.ljust(w) if left is None or i < left else x.rjust(w)
                               for i, (x, w) in enumerate(zip(row, widths, strict=True))).rstrip()
            for row in rows]


def _cell(x: str | Cell) -> Cell:
    return x if isinstance(x, Cell) else Cell(x)


@dataclass(frozen=True)
class Table:
    """Header and rows of cells; ``header=()`` for a two-column list of labels and values."""

    header: Sequence[str]
    rows: Sequence[Sequence[str | Cell]]
    css: str = "jitcompare"
    indent: str = ""

    def text_lines(self) -> list[str]:
        return aligned(([[printable(h) for h in self.header]] if self.header else [])
                       + [[_cell(x).as_text() for x in r] for r in self.rows], indent=self.indent)

    def as_html(self) -> Html:
        head = "".join(f"<th>{html.escape(h)}</th>" for h in self.header)
        body = "".join("<tr>" + "".join(f"<td>{_cell(x).as_html()}</td>" for x in r) + "</tr>"
                       for r in self.rows)
        return Html(f'<table class="{html.escape(self.css)}">'
                    + (f"<tr>{head}</tr>" if head else "") + body + "</table>")


@dataclass(frozen=True)
class Heading:
    """The section's title: a line of text, an ``<h4>``."""

    parts: str | Inline | Sequence[Inline]


@dataclass(frozen=True)
class Para:
    """Lines of prose (backquotes mark code); ``kind`` colours it in HTML."""

    lines: Sequence[str | Inline | Sequence[Inline]]
    kind: str = ""
    bold: bool = False


@dataclass(frozen=True)
class Pre:
    """Preformatted text (a traceback), cut by :func:`clip`; ``kind`` colours it in HTML."""

    text: str
    kind: str = ""


@dataclass(frozen=True)
class Details:
    """A collapsed block (a jaxpr); shown in text only when ``in_text``."""

    summary: str | Inline | Sequence[Inline]
    text: str
    in_text: bool = False


@dataclass(frozen=True)
class Image:
    """A PNG chart: an inline ``<img>`` in HTML, nothing in text."""

    png: bytes | None
    alt: str


Block = Heading | Para | Pre | Details | Image | Table


#: The columns prose takes at most (None: any), set by :func:`wrapped_to` for a whole report.
WIDTH: ContextVar[int | None] = ContextVar("WIDTH", default=None)


@contextmanager
def wrapped_to(width: int | None) -> Iterator[None]:
    """Within: :func:`as_text` wraps prose to ``width`` columns where it is given none."""
    token = WIDTH.set(width)
    try:
        yield
    finally:
        WIDTH.reset(token)


def as_text(blocks: Iterable[Block]) -> str:
    """The blocks as plain text: tables aligned, images left out, long prose wrapped."""
    lines: list[str] = []
    for b in blocks:
        if isinstance(b, Table):
            lines += b.text_lines()
        elif isinstance(b, Heading):
            lines += fitted(_inline_text(_parts(b.parts)))
        elif isinstance(b, Para):
            lines += [x for line in b.lines for x in fitted(_inline_text(_parts(line)))]
        elif isinstance(b, Pre):
            lines.append(printable(clip(b.text), lines=True))
        elif isinstance(b, Details) and b.in_text:
            lines += [_inline_text(_parts(b.summary)) + ":",
                      printable(clip(uncoloured(b.text)), lines=True) or "—"]
    return "\n".join(lines)


#: A space after a digit or around an arrow (``923 ms → 366 ms``): never broken at.
_AFTER_DIGIT = re.compile(r"(?<=\d) | (?=→)|(?<=→) ")
#: An option and its number (``say -r 9``, ``--budget 10``): never broken apart either.
_OPTION_VALUE = re.compile(r"(?<![\w-])(--?[a-z][\w-]*) (?=\d)")
#: Stands for such a space while a line is wrapped (no ASCII space, so no break).
_KEPT = "\u00a0"


def fitted(line: str, width: int | None = None, indent: str = "    ") -> list[str]:
    """``line`` wrapped at spaces to ``width`` columns, later lines indented, units kept."""
    width = WIDTH.get() if width is None else width
    if width is None or len(line) <= width:
        return [line]
    kept = _OPTION_VALUE.sub(rf"\1{_KEPT}", _AFTER_DIGIT.sub(_KEPT, line))
    return [x.replace(_KEPT, " ") for x in
            textwrap.wrap(kept, width, subsequent_indent=indent, break_long_words=False,
                          break_on_hyphens=False)]


#: A terminal's colour code (``ESC[35m``), as JAX's printer writes them in a notebook.
COLOUR = re.compile(r"\x1b\[[0-9;]*m")


def uncoloured(text: str) -> str:
    """``text`` without colour codes, so a report saved with them reads clean."""
    return COLOUR.sub("", text)


def fold(summary: str, body: str, opened: bool = False) -> Html:
    """``body`` folded under ``summary``, open where ``opened``: no script needed."""
    return Html(f"<details{' open' * opened}><summary>{_inline_html(prose(summary))}"
                f"</summary>{body}</details>")


def as_html(blocks: Iterable[Block]) -> Html:
    """The blocks as HTML: every string escaped here, code in ``<code>``."""
    return Html("\n".join(_block_html(b) for b in blocks if not (isinstance(b, Image)
                                                                  and not b.png)))


def _block_html(b: Block) -> str:
    if isinstance(b, Table):
        return b.as_html()
    if isinstance(b, Heading):
        return f"<h4>{_inline_html(_parts(b.parts))}</h4>"
    if isinstance(b, Para):
        body = "<br>".join(_inline_html(_parts(x)) for x in b.lines)
        return f"<p{STYLES[b.kind]}>{f'<b>{body}</b>' if b.bold else body}</p>"
    if isinstance(b, Pre):
        return f"<pre{STYLES[b.kind]}>{html.escape(clip(b.text))}</pre>"
    if isinstance(b, Details):
        return (f"<details><summary>{_inline_html(_parts(b.summary))}</summary>"
                f"<pre>{html.escape(clip(uncoloured(b.text)))}</pre></details>")
    return img(b.png or b"", b.alt)


def img(png: bytes, alt: str) -> Html:
    """An ``<img>`` with the PNG inline, so it shows with no kernel and no network."""
    data = base64.b64encode(png).decode()
    return Html(f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}"/>')


def switch(key: str, choices: Sequence[tuple[str, Html]], chosen: int = 0) -> Html:
    """Panels switched by radio buttons and CSS alone, so a static export keeps them."""
    key = re.sub(r"[^A-Za-z0-9-]", "-", key)
    shown = " ".join(f"#{key}-{i}:checked ~ .{key}-p{i}," for i in range(len(choices)))
    style = (f"<style>.{key}-panel {{display: none;}} {shown.rstrip(',')} "
             f"{{display: block;}}</style>")
    inputs = "".join(f'<input type="radio" name="{key}" id="{key}-{i}"{" checked" * (i == chosen)}>'
                     f'<label for="{key}-{i}"> {html.escape(label)} </label>'
                     for i, (label, _) in enumerate(choices))
    panels = "".join(f'<div class="{key}-panel {key}-p{i}">{panel}</div>'
                     for i, (_, panel) in enumerate(choices))
    return Html(f'<div class="jitcompare-switch" id="{key}">{style}{inputs}{panels}</div>')


def both(blocks: Sequence[Block]) -> tuple[str, Html]:
    """The blocks as (text, HTML)."""
    return as_text(blocks), as_html(blocks)


def answer_first(answer: Sequence[Block], rest: Sequence[Block], what: str,
                 verbose: bool = False) -> tuple[str, Html]:
    """A part's section as (text, HTML): ``answer`` first, ``rest`` behind -v or a click."""
    if not rest:
        return both(answer)
    text = as_text([*answer, *rest] if verbose else [*answer, Para([f"(-v shows {what})"])])
    return text, Html(f"{as_html(answer)}\n{fold(what, as_html(rest), verbose)}")


#: A part's section: (comparison, plot, verbose) -> (text, HTML), None where not measured.
Section = Callable[..., tuple[str, Html] | None]


def part_section(name: str, answer: Callable[[Any, Comparison], Sequence[Block]],
                 rest: Callable[[Any, Comparison, bool], Sequence[Block]], what: str) -> Section:
    """The section of the part ``name``: its record's :func:`answer_first` (``rest``: with
    its chart where ``plot``), None where the comparison did not measure it."""
    def section(c: Comparison, plot: bool = True, verbose: bool = False) -> tuple[str, Html] | None:
        record = c.part(name)
        return None if record is None else answer_first(answer(record, c),
                                                         rest(record, c, plot), what, verbose)
    return section


def sampled_line(c: Comparison | Sweep, brief: bool = False) -> list[Inline] | None:
    """Where the cold samples were taken, where the compiler remembers work or the command
    measured again after a crash (None elsewhere); ``brief``: fresh samples without why
    (but the crash's)."""
    said = c.env.get("cold_samples")
    if not isinstance(said, dict) or said.get("where") not in ("fresh", "session"):
        return None  # none, or a report's own (reports are untrusted input)
    if said["where"] == "fresh":
        cost, crashed = _seconds(said.get("sample_s")), said.get("after_crash")
        why = (f": in one process the command was killed by {cut_to(printable(crashed), 80)}"
               if isinstance(crashed, str) else "" if brief else ": the compiler here remembers")
        return [f"cold samples: each a fresh process running the file"
                f"{f' ({fmt_s(cost)} each)' if cost else ''}{why}"]
    if TARGET in c.env:  # compiled for in this process alone: no command takes cold ones
        return [SESSION.format("compiles"), TARGET_SESSION]
    options, left_out = cold_command(shlex.split(c.options or ""))
    if "--why" in left_out:  # it asks for the parts it implies: said once, as typed
        left_out = [f for f in left_out if f[2:] not in WHY_PARTS]
    file = os.path.basename(c.file) if c.file else "FILE.py"
    command = shlex.join(["python", "-m", "jitmagic", file, *options])
    bound = SWEPT.format(c.name, c.values[0]) if isinstance(c, Sweep) else ""
    return [SESSION.format("runs"), "; for cold ones, each sample in a fresh process, ",
            "" if c.file else SAVED_AS.format(c.entry), bound, "run ",
            Code(command), f" (without {', '.join(left_out)}: with {ONE_OR_MORE[len(left_out) > 1]}"
            f", the command too keeps its samples in one process)" if left_out else ""]


def _seconds(x: object) -> float | None:
    """``x`` where it is a positive finite number of seconds, else None."""
    if isinstance(x, bool) or not isinstance(x, int | float):
        return None
    return float(x) if 0 < x < math.inf else None


#: What figures taken in one process say where the backend's compiler remembers; then, by
#: what took them, where cold ones come from (a command's, or ``--target``'s: nowhere).
SESSION = ("figures: this session's (a process that has compiled before: this backend's "
           "compiler remembers, and warm {} are left out)")
TARGET_SESSION = ("; --target compiles for a topology in this process only, so no command "
                  "gives cold ones")
#: How a notebook's cell or a script's call becomes the command's file.
SAVED_AS = ("put the code that sets up and calls `{}` (a cell's, without its %%jitcompare "
            "line) in FILE.py and ")
#: What the options the command line leaves out are called, by whether there are several.
ONE_OR_MORE = ("it", "them")
#: How a sweep's value becomes the command's file (the command takes one program).
SWEPT = "bind `{0}` at the file's top to one of its values (`{0} = {1!r}`) and "


def provenance(c: Comparison | Sweep, sampled: bool = True) -> list[Block]:
    """Where a report came from (``made … by jitmagic 0.4.0 with -r 3``), source folded."""
    version = c.env.get("jitmagic")
    out: list[Block] = []
    if c.created or version or c.options is not None:
        made: list[Inline] = [f"made {c.created or '(time not recorded)'}",
                              f" by jitmagic {version}" if version else ""]
        made += [" from ", Code(c.file)] if c.file else []
        if c.options is not None:
            made += [" with ", Code(c.options) if c.options else "the default options"]
        out.append(Para([made], "note"))
    said = sampled_line(c) if sampled else None  # a sweep says it first
    out += [Para([said], "note")] if said else []
    if c.source:
        lines = c.source.count("\n") + (not c.source.endswith("\n"))
        out.append(Details((f"source ({lines} line{'s' * (lines != 1)})",), c.source))
    return out
