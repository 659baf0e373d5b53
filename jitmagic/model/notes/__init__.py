"""What the measuring notes beside its figures, held as facts (issue 53).

A warning of a comparison, or a note of a variant, is a :class:`Note`: a small frozen
record of one ``kind`` whose fields are names, numbers and flags. Its sentence is made
in :mod:`jitmagic.render.notes`, by the renderer registered for its type in
:mod:`jitmagic.model.shown` (``str(note)`` is that sentence). A report saves a note as
``{"kind": ..., its fields}`` and reads it back through :data:`KINDS`, the kinds by
name. A report saved before notes were facts holds plain sentences: each loads as the
string it was and is shown word for word (a :data:`Noted` is either).
"""

from __future__ import annotations

from . import cell as cell
from . import effects as effects
from . import kinds as kinds  # the kinds register themselves in KINDS
from . import parts as parts
from . import variants as variants
from .note import KINDS as KINDS
from .note import Note as Note
from .note import Noted as Noted
from .note import kind as kind
from .note import mentions as mentions
from .note import read_noted as read_noted
from .note import read_notes as read_notes
from .note import said as said
from .note import saved as saved
from .note import saved_note as saved_note
