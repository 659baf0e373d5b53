"""Records of what was measured: raw samples in, statistics out. Standard library only."""
