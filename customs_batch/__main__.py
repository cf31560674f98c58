"""`python -m customs_batch` runs the command line."""

from customs_batch.cli.main import run

if __name__ == "__main__":
    run()
