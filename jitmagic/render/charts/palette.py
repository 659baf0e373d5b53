"""One palette: each colour means one thing in every chart.

Phases have one colour each wherever they appear (the phases chart, the
attribution chart's trace shares, the sweep's panels), the two variants one
colour each (the sweep's lines), and the orderings chart picks out orderings
in colours that are none of these. Charts import their colours from here.
"""

from __future__ import annotations

#: One colour per phase. The first call is drawn as a marker, execute as its own panel.
PHASE = {
    "trace_s": "#4c72b0",       # blue
    "lower_s": "#55a868",       # green
    "compile_s": "#c44e52",     # red
    "first_call_s": "#222222",  # near-black marker
    "execute_s": "#8172b2",     # purple
}
#: Trace time that includes the helpers' callees: a light tint of the trace colour.
TRACE_INCLUSIVE = "#a9c0e0"

#: One colour per variant (lines and markers, never bars, so never mistaken for a phase).
VARIANT = {"flat": "#dd8452", "nested": "#937860"}  # orange, brown

#: The orderings chart: the ordering picked out, the two toggled ones, the references.
ORDERING_HIGHLIGHT = "#da8bc3"  # pink
ORDERING_TOGGLED = "#64b5cd"    # teal
ORDERING_REFERENCE = "#a0a0a0"  # grey

#: Whiskers (the min–max range of a bar's samples) and text on the charts.
RANGE = "#333333"
