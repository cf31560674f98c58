"""The command line: click commands that parse options, call one function, map errors to exit codes.

Only this package imports click.
"""
