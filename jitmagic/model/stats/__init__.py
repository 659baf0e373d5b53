"""The one significance rule, the verdicts worded from it, and seconds and ratios as a
person reads them: everything a record derives from its raw samples to say what they
show."""
