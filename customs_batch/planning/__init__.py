"""Planning: the dependency graph, the diff of the manifests against the state, plan files."""

from customs_batch.planning.diff import plan_changes
from customs_batch.planning.graph import dependency_order
from customs_batch.planning.model import Action, Operation, Plan, PlannedChange

__all__ = ["Action", "Operation", "Plan", "PlannedChange", "dependency_order", "plan_changes"]
