"""Big captured constants measured passed as arguments: which constants a program
captures (and the lines and Python names that hold them), the program replayed with
them passed as arguments, and the timed comparison of the two forms."""
