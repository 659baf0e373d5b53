"""``--lines``: what one cold trace and lowering built, per source line of the user's
code (jaxpr equations, StableHLO ops, how often each line ran)."""
