"""Loading's document stage: one walked document to a
:class:`~customs_batch.manifest.document.Document`: its envelope checked and read, inline
Jinja and the template merged under ``spec``, and its ``${ref:}`` references parsed.
"""
