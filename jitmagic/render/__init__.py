"""Presenting a result: rows built once and rendered as text and HTML, and charts.

Imports the model only, never the measuring code. Importing it registers the
renderers through which records show themselves (:mod:`jitmagic.model.shown`).
"""

from ..model.shown import register_renderers
from .bundle import repr_mimebundle, text

register_renderers(text, repr_mimebundle)
