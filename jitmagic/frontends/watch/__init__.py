"""The front doors of the watch: ``jitmagic.watch()``, ``%%jitwatch``, the command, pytest."""
