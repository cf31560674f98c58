"""Loading's row stage (``forEach``): one document per spreadsheet row (the rows read by
:mod:`customs_batch.manifest.spreadsheet`), its options, cells typed as Jinja sees them and
converted by the schema, and where each value of a row's document came from
(:mod:`.positions`).

Imported only by the first ``forEach`` (``_range`` is light: ``--rows`` needs it always).
"""
