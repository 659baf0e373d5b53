"""One palette: each colour means one thing in every chart, and all are colour-blind safe."""

from __future__ import annotations

BLACK, ORANGE, SKY_BLUE, BLUISH_GREEN = "#000000", "#e69f00", "#56b4e9", "#009e73"
YELLOW, BLUE, VERMILLION, REDDISH_PURPLE = "#f0e442", "#0072b2", "#d55e00", "#cc79a7"

#: One colour per part of a first call, and per call. The first call is drawn as a
#: marker only where its stages came from a separate staged run.
PHASE = {
    "trace_s": BLUE,
    "lower_s": BLUISH_GREEN,
    "compile_s": ORANGE,
    "rest_s": "#c8c8c8",        # light grey: what is not a stage
    "first_call_s": BLACK,      # the marker
    "execute_s": REDDISH_PURPLE,
}
#: Trace time that includes the helpers' callees: a light tint of the trace colour.
TRACE_INCLUSIVE = "#a6cde6"

#: One colour per variant (lines and markers, never bars, so never mistaken for a phase).
VARIANT = {"flat": VERMILLION, "nested": SKY_BLUE}

#: The orderings chart: the ordering picked out, the two toggled ones, the references.
ORDERING_HIGHLIGHT = YELLOW
ORDERING_TOGGLED = "#6b6b6b"    # dark grey
ORDERING_REFERENCE = "#d9d9d9"  # light grey
#: Bar edges on the orderings chart (a yellow bar needs one on white).
EDGE = "#444444"

#: Whiskers (the min–max range of a bar's samples) and text on the charts.
RANGE = "#333333"
