"""Reports on disk: every field checked against its kind, and the files they live in."""
