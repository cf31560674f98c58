"""Loading's template stage (``template: NAME``): finding a template (the project's, then the
built-in ones: :mod:`.catalog`), rendering it to YAML, reading that output by the kind's
schema, and placing each value at its template line or back at the manifest's ``values``.

Imported only by the first document that names a template (``catalog`` by ``templates``).
"""
