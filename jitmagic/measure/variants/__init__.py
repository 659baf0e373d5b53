"""Flat and nested variants of one entry: planned, built, checked, and as sampler rows."""
