"""``--lines``: what one cold trace and lowering built, per user source line."""
