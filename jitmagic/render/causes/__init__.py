"""The sections of "why is my compile slow": one per measured cause, and the ranking."""
