"""Whole reports, at the top of the records: saving and loading every kind
(:mod:`.storage`) and the one door to a diff of two of them (:mod:`.diffs`)."""
