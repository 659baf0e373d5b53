"""What the command needs of its process and its script apart from measuring: Ctrl-C, the script's
checks, safe streams."""
