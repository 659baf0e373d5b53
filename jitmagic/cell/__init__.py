"""Running the user's source headless: a cell or a file split into setup and call, run
in a scratch namespace, with what it changes outside that namespace put back, and the
provenance its report carries. No IPython here: the magic and the command share it."""
