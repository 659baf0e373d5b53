"""Which of the user's functions a trace really calls, what each one is, and where it is
bound: from the traced program's source information, live objects, and a profiled
trace where those cannot tell."""
