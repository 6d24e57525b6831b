"""Evaluating a trained XGBoost ensemble from its own JSON, with numpy alone.

Importing xgboost costs about two seconds; an estimate must not pay that. The JSON model
format is XGBoost's documented, stable serialisation, so the artifact stays XGBoost's own
and any XGBoost can load it, while perfpredict walks the trees itself. A test checks that
this evaluator and ``xgboost.Booster.predict`` agree.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from perfpredict.laws.base import FloatArray


def _base_score(text: str | float) -> float:
    return float(str(text).strip("[]"))


@dataclass
class _Tree:
    left: np.ndarray
    right: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray  # split value, or the leaf value at leaves
    default_left: np.ndarray
    depth: int


class TreeEnsemble:
    """A squared-error XGBoost regressor's trees, ready to predict."""

    def __init__(self, model_json: str) -> None:
        doc: dict[str, Any] = json.loads(model_json)
        learner = doc["learner"]
        objective = learner["objective"]["name"]
        if objective != "reg:squarederror":
            raise ValueError(f"only reg:squarederror ensembles are supported, not {objective}")
        self.base_score = _base_score(learner["learner_model_param"]["base_score"])
        self.trees = [self._tree(t) for t in learner["gradient_booster"]["model"]["trees"]]

    @staticmethod
    def _tree(t: dict[str, Any]) -> _Tree:
        left = np.asarray(t["left_children"], dtype=np.int64)
        right = np.asarray(t["right_children"], dtype=np.int64)
        depth = np.zeros(left.size, dtype=np.int64)
        for node in range(left.size):  # parents precede children in XGBoost's layout
            if left[node] >= 0:
                depth[left[node]] = depth[right[node]] = depth[node] + 1
        return _Tree(left, right, np.asarray(t["split_indices"], dtype=np.int64),
                     np.asarray(t["split_conditions"], dtype=np.float32),
                     np.asarray(t["default_left"], dtype=bool), int(depth.max()))

    def predict(self, features: FloatArray) -> FloatArray:
        """Margin (here: the predicted log correction) for each row of ``features``."""
        x = np.atleast_2d(np.asarray(features, dtype=np.float32))  # as XGBoost compares
        rows = np.arange(x.shape[0])
        total = np.full(x.shape[0], self.base_score)
        for tree in self.trees:
            node = np.zeros(x.shape[0], dtype=np.int64)
            for _ in range(tree.depth):
                internal = tree.left[node] >= 0
                value = x[rows, tree.feature[node]]
                go_left = np.where(np.isnan(value), tree.default_left[node],
                                   value < tree.threshold[node])
                child = np.where(go_left, tree.left[node], tree.right[node])
                node = np.where(internal, child, node)
            total += tree.threshold[node]
        return total
