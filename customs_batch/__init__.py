"""customs-batch: a declarative, file-driven batch submitter for the Customs Declaration Service."""

__version__ = "0.1.0"
