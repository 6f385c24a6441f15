"""The bias battery: a judge re-asked on controlled perturbations of labelled cases (`judge bias`)."""

from judge.grade.bias.battery import BiasRun, run_battery
from judge.grade.bias.perturb import PERTURBATIONS

__all__ = ["PERTURBATIONS", "BiasRun", "run_battery"]
