"""Presenting a result: rows built once and rendered as text and HTML, and charts.

Imports the model only, never the measuring code.
"""
