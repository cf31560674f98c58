"""Loading's Jinja stage: the sandboxed Jinja that inline strings, templates and rows run in,
bounded in time and size, its errors in the user's words.

Imported only by the first document holding a Jinja string, a template or a ``forEach``:
this package's ``__init__`` imports nothing, so a plain manifest never loads Jinja.
"""
