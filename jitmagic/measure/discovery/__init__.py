"""Which of the user's functions a trace calls, what each is, and where it is bound."""
