"""Reports on disk: every field of a report someone else wrote checked against its kind,
saving and loading, and the files reports go to and come from."""
