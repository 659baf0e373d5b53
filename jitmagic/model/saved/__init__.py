"""Reports on disk, below the records: every field of a report someone else wrote checked
against its kind, and the files reports go to and come from (:mod:`jitmagic.model.reports.storage`
saves and loads through them)."""
