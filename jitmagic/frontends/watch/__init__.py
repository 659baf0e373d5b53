"""The front doors of "why does it compile again": ``jitmagic.watch()`` (:mod:`.api`),
``%%jitwatch`` (:mod:`.magic`), ``python -m jitmagic watch`` (:mod:`.command`) and the
pytest marker and fixture (:mod:`.pytest_plugin`), all on
:mod:`jitmagic.measure.watch`."""
