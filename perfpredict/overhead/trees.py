"""Evaluating a trained XGBoost ensemble from its own JSON, with numpy alone.

Importing xgboost costs about two seconds; an estimate must not pay that. The JSON model
format is XGBoost's documented, stable serialisation, so the artifact stays XGBoost's own
and any XGBoost can load it, while perfpredict walks the trees itself. A test checks that
this evaluator and ``xgboost.Booster.predict`` agree.

All trees are packed into flat node arrays and walked together, one level per step, so a
prediction costs about ``max_depth`` numpy operations on (rows x trees) arrays rather
than that many per tree: a single estimate stays in milliseconds and a batch of 100k
queries in well under a second.

Those flat arrays are also stored beside XGBoost's JSON in an artifact, as a *tree
table* (:meth:`TreeEnsemble.to_table`, arrays packed by :mod:`perfpredict.packed`).
Reading the table takes well under a millisecond, where parsing XGBoost's JSON of the
two boosters of a predictor and packing its trees took about 10 ms of every estimate.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from perfpredict.laws.base import FloatArray
from perfpredict.packed import pack, unpack

#: Rows walked at once: bounds the (rows x trees) node-index arrays to a few MB.
ROWS_PER_BLOCK = 2048


def _base_score(text: str | float) -> float:
    return float(str(text).strip("[]"))


#: Each array of a tree table and the dtype it is packed as: indices fit 32 bits,
#: thresholds are XGBoost's float32.
TABLE_DTYPES = {"roots": "<i4", "left": "<i4", "right": "<i4", "feature": "<i4",
                "threshold": "<f4", "default_left": "|b1"}


class TreeEnsemble:
    """A squared-error XGBoost regressor's trees, ready to predict: from XGBoost's own
    JSON (:meth:`from_xgboost_json`) or from the tree table stored beside it
    (:meth:`from_table`), which hold the same arrays."""

    def __init__(self, base_score: float, roots: np.ndarray, left: np.ndarray,
                 right: np.ndarray, feature: np.ndarray, threshold: np.ndarray,
                 default_left: np.ndarray) -> None:
        self.base_score = base_score
        #: Index of each tree's root in the flat arrays.
        self.roots = roots.astype(np.int64)
        #: Children as flat indices; a leaf points at itself, so walking on is a no-op.
        self.left = left.astype(np.int64)
        self.right = right.astype(np.int64)
        self.feature = feature.astype(np.int64)  # 0 at leaves
        self.threshold = threshold.astype(np.float32)  # the leaf value at leaves
        self.default_left = default_left.astype(bool)
        self.depth = self._max_depth(self.left, self.right, self.roots)

    @classmethod
    def from_xgboost_json(cls, model_json: str) -> TreeEnsemble:
        doc: dict[str, Any] = json.loads(model_json)
        learner = doc["learner"]
        objective = learner["objective"]["name"]
        if objective != "reg:squarederror":
            raise ValueError(f"only reg:squarederror ensembles are supported, not {objective}")
        trees = learner["gradient_booster"]["model"]["trees"]
        sizes = np.array([len(t["left_children"]) for t in trees], dtype=np.int64)
        roots = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        offset = np.repeat(roots, sizes)

        def flat(name: str, dtype: type) -> np.ndarray:
            if not trees:
                return np.zeros(0, dtype=dtype)
            return np.concatenate([np.asarray(t[name], dtype=dtype) for t in trees])

        left, right = flat("left_children", np.int64), flat("right_children", np.int64)
        leaf = left < 0
        own = np.arange(left.size, dtype=np.int64)
        return cls(base_score=_base_score(learner["learner_model_param"]["base_score"]),
                   roots=roots, left=np.where(leaf, own, left + offset),
                   right=np.where(leaf, own, right + offset),
                   feature=np.where(leaf, 0, flat("split_indices", np.int64)),
                   threshold=flat("split_conditions", np.float32),
                   default_left=flat("default_left", bool))

    @classmethod
    def mean(cls, ensembles: list[TreeEnsemble]) -> TreeEnsemble:
        """One ensemble predicting the mean of ``ensembles``' margins: their trees side by
        side, each leaf value divided by their number (exact in float32 for a power of
        two), the base scores averaged."""
        n = len(ensembles)
        offsets = np.cumsum([0] + [e.left.size for e in ensembles[:-1]])

        def joined(name: str, offset: bool = False) -> np.ndarray:
            """``name``'s arrays end to end, node indices shifted to the joined ones."""
            return np.concatenate([getattr(e, name) + shift if offset else getattr(e, name)
                                   for e, shift in zip(ensembles, offsets, strict=True)])

        left = joined("left", offset=True)
        leaf = left == np.arange(left.size)
        threshold = joined("threshold")
        return cls(base_score=sum(e.base_score for e in ensembles) / n,
                   roots=joined("roots", offset=True), left=left,
                   right=joined("right", offset=True), feature=joined("feature"),
                   threshold=np.where(leaf, threshold / np.float32(n), threshold),
                   default_left=joined("default_left"))

    def to_table(self) -> dict[str, Any]:
        """The flat arrays as JSON-ready data: ``{"base_score": ..., "arrays": {name:
        packed array}}``."""
        return {"base_score": self.base_score,
                "arrays": {name: pack(getattr(self, name), dtype)
                           for name, dtype in TABLE_DTYPES.items()}}

    @classmethod
    def from_table(cls, table: dict[str, Any]) -> TreeEnsemble:
        return cls(base_score=float(table["base_score"]),
                   **{name: unpack(table["arrays"][name], dtype)
                      for name, dtype in TABLE_DTYPES.items()})

    @staticmethod
    def _max_depth(left: np.ndarray, right: np.ndarray, roots: np.ndarray) -> int:
        """Levels of the deepest tree: the walk needs that many steps to reach any leaf."""
        internal = left != np.arange(left.size)
        depth, frontier = 0, roots[internal[roots]]
        while frontier.size:
            depth += 1
            children = np.concatenate([left[frontier], right[frontier]])
            frontier = children[internal[children]]
        return depth

    def predict(self, features: FloatArray) -> FloatArray:
        """Margin (here: the predicted log correction) for each row of ``features``."""
        x = np.atleast_2d(np.asarray(features, dtype=np.float32))  # as XGBoost compares
        n_features = x.shape[1]
        out = np.empty(x.shape[0])
        for start in range(0, x.shape[0], ROWS_PER_BLOCK):
            block = x[start:start + ROWS_PER_BLOCK]
            flat = block.ravel()
            row_base = (np.arange(block.shape[0]) * n_features)[:, None]
            node = np.broadcast_to(self.roots, (block.shape[0], self.roots.size))
            for _ in range(self.depth):
                value = flat[row_base + self.feature[node]]
                # NaN compares False, so it goes left only where the tree says missing does
                go_left = (value < self.threshold[node]) | (
                    np.isnan(value) & self.default_left[node])
                node = np.where(go_left, self.left[node], self.right[node])
            out[start:start + block.shape[0]] = (
                self.base_score + self.threshold[node].sum(axis=1, dtype=np.float64))
        return out
