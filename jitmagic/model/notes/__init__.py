"""What the measuring notes beside its figures, held as facts (issues 53 and 58).

A warning of a comparison, or a note of a variant, is a :class:`Note`: a frozen record
of one ``kind`` whose fields are names, numbers and flags. Each kind belongs to one
family (:mod:`.families`: a comparison's warnings, how a variant took its helpers, what
the cell put back, ...), whose table names its fields; its sentence is one row of
:data:`jitmagic.render.notes.TEMPLATES` (``str(note)``). Adding a note is a row in each
table and one call where the fact is recorded (``Warned("waited", seconds)``). A report
saves a note as ``{"kind": ..., its fields}`` and reads it back by its kind, checked so
that its sentence can be said. A report saved before notes were facts holds plain
sentences: each loads as the string it was and is shown word for word (a :data:`Noted`
is either).
"""

from __future__ import annotations

from .families import Constants as Constants
from .families import Differs as Differs
from .families import Inline as Inline
from .families import Leak as Leak
from .families import Parts as Parts
from .families import Placed as Placed
from .families import PutBack as PutBack
from .families import Ran as Ran
from .families import Taken as Taken
from .families import Warned as Warned
from .note import FAMILY as FAMILY
from .note import KEYS as KEYS
from .note import Note as Note
from .note import Noted as Noted
from .note import mentions as mentions
from .note import read_noted as read_noted
from .note import read_notes as read_notes
from .note import said as said
from .note import saved as saved
from .note import saved_note as saved_note
